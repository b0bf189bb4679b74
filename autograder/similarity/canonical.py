"""Code put in a canonical form from its syntax tree, so that structural disguises do not hide a copy.

What MOSS-like tools do for structure, before :mod:`.fingerprints` does the rest (names, strings,
spacing): the answer is parsed (code that does not parse is left as it is), put through each step
of docs/similarity.md ("What is compared", 1. Canonical form) and re-printed with :func:`ast.unparse`.
Each step keeps what the code does, up to how often and when an expression is evaluated, which a
copy does not change either; it only removes choices a copier makes freely.
"""

import ast
import copy
import functools
import itertools
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from autograder.similarity.algebra import normal_arithmetic
from autograder.similarity.classes import flatten_classes, known_classes
from autograder.similarity.deadcode import Function, strip
from autograder.similarity.equivalences import equivalences
from autograder.similarity.loops import comprehensions
from autograder.similarity.signatures import Signatures, bind_calls, parse
from autograder.similarity.spellings import SIGNATURES, given, respell
from autograder.similarity.trees import children, walk

Helpers = dict[str, ast.FunctionDef]
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def canonical(
    code: str,
    helpers: Helpers | None = None,
    key: Callable[[str], str] = str,
    keep: Iterable[str] | None = None,
    elsewhere: str = "",
    signatures: Signatures | None = None,
) -> str:
    """``code`` re-printed in canonical form; unchanged when it does not parse.

    ``helpers`` are helpers defined elsewhere in the notebook (:func:`helpers_of` of the added
    cells); ``key`` maps a statement's text to what orders free statements (the normalised text);
    ``keep`` the functions the release asks for (others nothing calls are dead code, ``elsewhere``
    being the notebook's other code that may call them; None keeps every function); ``signatures`` those
    of the course's and the added cells' functions and classes (:mod:`.signatures`), whose calls are bound.
    """
    tree = parse(code)
    if tree is None:
        return code
    try:
        tree, found = prepared(tree, helpers, keep, elsewhere, signatures)
        # Twice: a helper inlined may call another (one of the answer's own, called only from the added cells).
        for _ in range(2):
            if not inline_helpers(tree, {**(helpers or {}), **local_helpers(tree)}, found.called):
                break
            strip(tree)
            found = folded(tree)
        tree = normal_arithmetic(tree, key)
        found = survey(tree)
        ast.fix_missing_locations(tree)  # unparse reads an assignment's line number
        order_free_statements(found.blocks, key)
        return ast.unparse(tree)
    except (RecursionError, ValueError, TypeError, AttributeError):  # a tree too deep or too odd to re-print
        return code


def helpers_of(code: str, signatures: Signatures | None = None) -> Helpers:
    """The helper functions ``code`` defines at its top level (for the other cells), in canonical form
    (``signatures``: the course's, as for :func:`canonical`)."""
    tree = parse(code)
    if tree is None:
        return {}
    try:
        tree, _ = prepared(tree, {}, signatures=signatures)
    except (RecursionError, ValueError, TypeError, AttributeError):
        return {}
    return local_helpers(tree)


def prepared(tree: ast.Module, helpers: Helpers | None, keep: Iterable[str] | None = None, elsewhere: str = "",
             signatures: Signatures | None = None) -> tuple[ast.Module, "Survey"]:
    """``tree`` through the steps before inlining (:func:`canonical`'s parameters), its temporaries folded, and
    its :func:`survey`. The lists of statements stay the same lists through every later step (each edits them)."""
    flatten_classes(tree, known_classes((helpers or {}).values()))
    tree = bind_calls(comprehensions(strip(equivalences(respell(tree)), keep, elsewhere)), signatures or {})
    return tree, folded(tree, drop_docstrings=True)


def folded(tree: ast.Module, drop_docstrings: bool = False) -> "Survey":
    """:func:`survey` of ``tree``, each function's temporaries then folded (:func:`fold_temporaries`)."""
    found = survey(tree, drop_docstrings)
    for scope in found.scopes:
        fold_temporaries(scope)
    return found


BLOCKS = {  # the fields that hold lists of statements, by node type
    kind: tuple(f for f in ("body", "orelse", "finalbody") if f in kind._fields)
    for kind in (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While,
                 ast.If, ast.With, ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try), ast.ExceptHandler,
                 ast.match_case)
}


@dataclass
class Scope:
    """What :func:`fold_temporaries` needs of one function, from :func:`survey`."""

    function: Function
    stores: dict[str, int] = field(default_factory=dict)  # a nested scope's use counts 2: never folded
    loads: dict[str, int] = field(default_factory=dict)
    hidden: set[int] = field(default_factory=set)  # Name nodes inside a nested function, lambda or class
    bodies: list[list[ast.stmt]] = field(default_factory=list)  # its own blocks, not those of nested scopes


@dataclass
class Survey:
    scopes: list[Scope]  # every function, each before the functions inside it
    blocks: list[list[ast.stmt]]  # every list of statements
    called: set[str]  # the names called (``f(...)``)


def statement_lists(node: ast.AST) -> list[list[ast.stmt]]:
    return [block for name in BLOCKS.get(type(node), ()) if (block := getattr(node, name))]


def drop_docstring(node: ast.AST) -> None:
    if isinstance(node, ast.Module | ast.ClassDef | Function) and node.body:
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            node.body[:1] = [] if len(node.body) > 1 else [ast.Pass()]


def survey(root: ast.AST, drop_docstrings: bool = False) -> Survey:
    """One walk of ``root`` (depth first): each function's :class:`Scope`, the lists of statements and the
    names called; with ``drop_docstrings``, docstrings are dropped on the way (in place).

    Each node is counted for every function around it, as *nested* there when a function, lambda
    or class lies in between; a function's own nodes are met in the same order as a walk of that
    function alone would meet them.
    """
    scopes: list[Scope] = []
    blocks: list[list[ast.stmt]] = []
    called: set[str] = set()
    pending: list[tuple[ast.AST, tuple[tuple[Scope, bool], ...]]] = [(root, ())]
    while pending:
        node, frames = pending.pop()
        if isinstance(node, ast.Name):
            load = isinstance(node.ctx, ast.Load)
            for scope, nested in frames:
                counts = scope.loads if load else scope.stores
                counts[node.id] = counts.get(node.id, 0) + 1 + nested
                if nested:
                    scope.hidden.add(id(node))
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for scope, _ in frames:
                for name in node.names:
                    scope.stores[name] = scope.stores.get(name, 0) + 2
        if drop_docstrings:
            drop_docstring(node)
        own = statement_lists(node)
        blocks += own
        inner = isinstance(node, SCOPES)
        for scope, nested in frames:
            if not (nested or inner):
                scope.bodies += own
        frames = tuple((scope, nested or inner) for scope, nested in frames)
        if isinstance(node, Function):
            scope = Scope(node, bodies=list(own))
            for argument in walk(node.args):
                if isinstance(argument, ast.arg):
                    scope.stores[argument.arg] = scope.stores.get(argument.arg, 0) + 2
            scopes.append(scope)
            frames += ((scope, False),)
        pending += [(child, frames) for child in children(node)]
    return Survey(scopes, blocks, called)


def local_helpers(tree: ast.Module) -> Helpers:
    """Top-level functions of ``tree`` that :func:`inlinable` allows, by name."""
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and inlinable(node)}


def inlinable(function: ast.FunctionDef) -> bool:
    """Plain parameters, no decorator, and a body that ends in its only ``return`` of a value.

    Nothing in the body returns, yields or binds names outside it (``global``, a nested function or class).
    """
    last = function.body[-1]
    if function.decorator_list or not (isinstance(last, ast.Return) and last.value is not None):
        return False
    arguments = function.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
        return False
    barred = ast.Return | ast.Yield | ast.YieldFrom | ast.Global | ast.Nonlocal | ast.ClassDef | Function
    return not any(isinstance(n, barred) for s in [*function.body[:-1], last.value] for n in walk(s))


def arguments(helper: ast.FunctionDef, call: ast.Call, missed: set[str]) -> dict[str, ast.expr] | None:
    """The helper's parameters bound to the call's arguments (defaults filling the rest); None when they do not fit,
    the helper's name then added to ``missed``."""
    names = [a.arg for a in helper.args.args]
    bound = given(call, names)
    defaults = dict(zip(names[len(names) - len(helper.args.defaults) :], helper.args.defaults, strict=True))
    if bound is None or any(name not in bound and name not in defaults for name in names):
        missed.add(helper.name)
        return None
    return bound | {name: defaults[name] for name in names if name not in bound}


class Substitute(ast.NodeTransformer):
    """Names replaced by expressions (copies), except where a nested scope rebinds them."""

    def __init__(self, values: dict[str, ast.expr]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        return node


class Inliner(ast.NodeTransformer):
    """Each call of a helper replaced by the helper's expression on the call's arguments."""

    def __init__(self, helpers: Helpers):
        self.helpers = helpers
        self.missed: set[str] = set()  # helpers called somewhere they could not be inlined

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        helper = self.helpers.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if helper is None:
            return node
        bound = arguments(helper, node, self.missed)
        return node if bound is None else Substitute(bound).visit(copy.deepcopy(helper.body[0].value))


def inline_helpers(tree: ast.Module, helpers: Helpers, called: set[str]) -> bool:
    """Inline ``helpers`` wherever called, dropping a local helper's ``def`` once every call is; whether any was.

    ``called``: the names ``tree`` calls. A one-``return`` helper becomes an expression where it is
    called; a longer one's statements go before the statement that calls it (:class:`Expander`). A
    one-``return`` helper calling another is inlined with the other already inlined into it (one level).
    """
    helpers = {name: helper for name, helper in helpers.items() if name in called}
    if not helpers:
        return False
    short = {name: helper for name, helper in helpers.items() if len(helper.body) == 1}
    ready = {
        name: Inliner({n: h for n, h in short.items() if n != name}).visit(copy.deepcopy(helper))
        for name, helper in helpers.items()
    }
    inliner = Inliner({name: helper for name, helper in ready.items() if len(helper.body) == 1})
    expander = Expander({name: helper for name, helper in ready.items() if len(helper.body) > 1})
    own = {id(helper) for helper in helpers.values()}  # this cell's helper definitions (not the added cells')
    for statement in tree.body:
        if id(statement) not in own:
            inliner.visit(statement)
            for node in walk(statement):
                for block in statement_lists(node):
                    expander.expand(block)
    expander.expand(tree.body, skip=own)
    missed = inliner.missed | expander.missed
    tree.body[:] = [s for s in tree.body if id(s) not in own or s.name in missed] or [ast.Pass()]
    return True


class Rename(ast.NodeTransformer):
    """Names renamed, read or written."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node


class Replace(ast.NodeTransformer):
    """One node (by identity) replaced by another."""

    def __init__(self, old: ast.AST, new: ast.AST):
        self.old, self.new = old, new

    def visit(self, node: ast.AST) -> ast.AST:
        return self.new if node is self.old else super().visit(node)


SIMPLE = ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return | ast.Expr
LAZY = ast.Lambda | ast.IfExp | ast.BoolOp | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp


class Expander:
    """Calls of multi-statement helpers inlined: the helper's statements, its parameters bound to the call's
    arguments (``param = arg``, folded later), go before the calling statement, and its returned
    expression replaces the call. Its names are renamed apart (``name_1``); only calls that a simple
    statement evaluates for sure (not in a lambda, comprehension, ``and``/``or`` or ``x if c else y``).
    """

    def __init__(self, helpers: Helpers):
        self.helpers = helpers
        self.missed: set[str] = set()
        self.count = itertools.count(1)

    def calls(self, statement: ast.stmt) -> list[ast.Call]:
        found, pending = [], [statement]
        while pending:
            node = pending.pop()
            if isinstance(node, LAZY):
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.helpers:
                found.append(node)
            pending += children(node)
        return found

    def expand(self, block: list[ast.stmt], skip: set[int] = frozenset()) -> None:
        if not self.helpers:
            return
        index = 0
        while index < len(block):
            statement = block[index]
            calls = self.calls(statement) if isinstance(statement, SIMPLE) and id(statement) not in skip else []
            inlined = next((done for call in calls if (done := self.inline(call, statement))), None)
            if inlined is None:
                index += 1
                continue
            block[index : index + 1] = [*inlined[0], inlined[1]]

    def inline(self, call: ast.Call, statement: ast.stmt) -> tuple[list[ast.stmt], ast.stmt] | None:
        """The statements to put before ``statement`` and the statement with ``call`` replaced; None if it cannot be."""
        helper = self.helpers[call.func.id]
        if (bound := arguments(helper, call, self.missed)) is None:
            return None
        suffix = next(self.count)
        local = {a.arg for a in helper.args.args} | {
            n.id for s in helper.body for n in walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        names = {name: f"{name}_{suffix}" for name in local}
        passed = [value.id for value in bound.values() if isinstance(value, ast.Name)]
        if isinstance(statement, ast.Return) and len(passed) == len(set(passed)):
            # Nothing of the caller runs after a return: a parameter given a name may take that name.
            names |= {name: value.id for name, value in bound.items() if isinstance(value, ast.Name)}
            bound = {name: value for name, value in bound.items() if not isinstance(value, ast.Name)}
        body = [Rename(names).visit(copy.deepcopy(s)) for s in helper.body]
        prelude = [ast.Assign([ast.Name(names[name], ast.Store())], value) for name, value in bound.items()]
        return [*prelude, *body[:-1]], Replace(call, body[-1].value).visit(statement)


def dotted(node: ast.expr) -> str:
    """``self.w_q`` for an attribute chain on a name; the code itself for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id if isinstance(node, ast.Name) else ast.unparse(node), *reversed(parts)])


def reads_and_writes(statement: ast.stmt) -> tuple[set[str], set[str], set[str]]:
    """What a statement reads, writes and writes in part: names, and attribute chains (``self.w_q``) as one.

    ``x[i] = ...`` writes ``x[i]`` and writes ``x`` in part, without reading ``x``: two writes into
    different slices of one tensor (``pe[:, 0::2]``, ``pe[:, 1::2]``) are free to swap; either
    conflicts with a statement that reads or rebinds ``x``.
    """
    reads: set[str] = set()
    writes: set[str] = set()
    partial: set[str] = set()
    bases = set()
    for node in walk(statement):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
            writes.add(ast.unparse(node))
            partial.add(dotted(node.value))
            bases.add(id(node.value))
        elif isinstance(node, ast.Name | ast.Attribute) and id(node) not in bases:
            (writes if isinstance(node.ctx, ast.Store | ast.Del) else reads).add(dotted(node))
    return reads, writes, partial


def conflict(first: tuple[set[str], set[str], set[str]], second: tuple[set[str], set[str], set[str]]) -> bool:
    """Whether two statements' order matters, from their :func:`reads_and_writes`."""
    (read_1, write_1, partial_1), (read_2, write_2, partial_2) = first, second
    return bool(
        write_1 & (read_2 | write_2 | partial_2)
        or write_2 & (read_1 | partial_1)
        or partial_1 & read_2
        or partial_2 & read_1
    )


PURE_CALLS = frozenset(SIGNATURES) | {
    "cat", "stack", "where", "view", "reshape", "contiguous", "permute", "expand", "expand_as", "float", "int",
    "len", "sqrt", "ones", "zeros", "arange", "full", "full_like", "ones_like", "zeros_like", "finfo", "size",
}


MUTABLE = ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp | ast.GeneratorExp


def pure(expression: ast.expr) -> bool:
    """Whether evaluating ``expression`` twice gives the same and changes nothing: only calls of :data:`PURE_CALLS`."""
    for node in walk(expression):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name not in PURE_CALLS:
                return False
        elif isinstance(node, MUTABLE | ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr | ast.Lambda):
            return False  # a new list is not the same list twice
    return True


def fold_temporaries(scope: Scope) -> None:
    """Fold each temporary of the scope's function into its uses (``x = expr; return f(x)`` reads
    ``return f(expr)``).

    The candidates are the names stored once, outside nested scopes (:func:`survey` counted them),
    and read once, or more often when their value is :func:`pure`; folding one moves its
    expression without changing any other name's counts, so they stay candidates. A function is
    folded before the functions inside it.
    """
    candidates = {name: count for name, count in scope.loads.items() if scope.stores.get(name) == 1}
    while candidates and (name := fold_one(scope.bodies, candidates, scope.hidden)):
        del candidates[name]


def fold_one(bodies: list[list[ast.stmt]], candidates: dict[str, int], hidden: set[int]) -> str | None:
    """Fold the first candidate that can be folded into all its reads; its name, or None.

    ``candidates``: name -> how often the function reads it.

    What each statement names and writes is found once per call (nothing changes until the fold).
    """
    effects_of = functools.cache(reads_and_writes)  # ast nodes hash by identity

    @functools.cache
    def names_in(statement: ast.stmt) -> dict[str, int]:
        """How often ``statement`` reads each name, outside nested scopes."""
        return Counter(n.id for n in walk(statement) if isinstance(n, ast.Name) and id(n) not in hidden)

    for body in bodies:
        for index, statement in enumerate(body):
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and statement.targets[0].id in candidates
            ):
                continue
            name = statement.targets[0].id
            wanted = candidates[name]
            if wanted > 1 and not pure(statement.value):
                continue
            if uses := later_uses(body, index, name, wanted, names_in, effects_of):
                for later in uses:
                    body[later] = Substitute({name: statement.value}).visit(body[later])
                del body[index]
                return name
    return None


def later_uses(
    body: list[ast.stmt],
    index: int,
    name: str,
    wanted: int,
    names_in: Callable[[ast.stmt], dict[str, int]],
    effects_of: Callable[[ast.stmt], tuple[set[str], set[str], set[str]]],
) -> list[int]:
    """The indices of the statements after ``body[index]`` that hold all ``wanted`` reads of ``name``; [] when
    something before the last read writes what the assignment reads (or they are not all there)."""
    read = effects_of(body[index])[0]
    found, uses = 0, []
    for later in range(index + 1, len(body)):
        count = names_in(body[later]).get(name, 0)
        found += count
        simple = isinstance(body[later], SIMPLE)
        last = found >= wanted
        if count:
            uses.append(later)
        if not (count and simple and last):  # a loop's target, a with's name, or a statement in between
            _, written, partial = effects_of(body[later])
            if (written | partial) & read:
                return []
        if last:
            return uses if found == wanted else []
    return []


def order_free_statements(blocks: list[list[ast.stmt]], key: Callable[[str], str]) -> None:
    """Each run of consecutive assignments in one order: dependencies kept, ties by ``key`` of their text."""
    for body in blocks:
        start = 0
        while start < len(body):
            end = start
            while end < len(body) and isinstance(body[end], ast.Assign | ast.AnnAssign):
                end += 1
            if end - start > 1:
                body[start:end] = canonical_order(body[start:end], key)
            start = end + 1


def canonical_order(statements: list[ast.stmt], key: Callable[[str], str]) -> list[ast.stmt]:
    """``statements`` topologically sorted (one before another when the other reads or rewrites what it writes)."""
    effects = [reads_and_writes(s) for s in statements]
    keys: dict[int, str] = {}  # only where there is a tie to break
    before = [{i for i in range(j) if conflict(effects[i], effects[j])} for j in range(len(statements))]
    done: list[int] = []
    while len(done) < len(statements):
        free = [j for j in range(len(statements)) if j not in done and before[j] <= set(done)]
        if len(free) > 1:
            for j in free:
                if j not in keys:
                    keys[j] = key(ast.unparse(statements[j]))
        done.append(min(free, key=lambda j: (keys.get(j, ""), j)))
    return [statements[j] for j in done]
