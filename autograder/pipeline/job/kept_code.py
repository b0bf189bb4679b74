"""What the clean re-run keeps of a student's cell, and what it says about what it left out.

The rule, statement by statement at the top level of an answer cell (or of a cell the student added):

- **kept**: every import, function and class (whole: an import inside a function, a class constant
  computed by a call come with it); an assignment to plain names (``_GATE_BIAS = math.log(3.0)``,
  ``_ONE = torch.tensor(1.0)``, ``_EPS = 1e-6``, ``A, B = 1, 2``) whose value reads only names the clean
  re-run has at that point: what the notebook's own cells above bind (``torch``, ``math``, ``nn``, its
  variables), what the kept code of the student's cells above and of this cell before it binds, and
  builtins; an ``if`` or ``try`` (``try: import numpy`` ...) made only of kept statements;
- **left out**: everything else: calls, loops, prints and other top-level code; an assignment that
  reads a name the clean re-run does not have (a variable that only the student's kernel held: a cell
  since deleted or edited, or run out of order) or that binds an attribute, an item or a name the
  notebook defines (``check_close``, ``torch``: only the very import the notebook makes may be repeated)
  or a builtin; a value that reaches into the interpreter (``getattr``, ``vars``, ``exec``, a private
  ``_attribute``, a walrus) or that the tamper scan names (:mod:`autograder.pipeline.job.static_scan`).

Values are computed in the clean re-run itself, from its own run of the notebook's cells: nothing the
student's kernel held can reach a test through them.
"""

import ast
import builtins
import re
from dataclasses import dataclass, field

from autograder.course.notebook_code import bound_names, without_magics
from autograder.pipeline.feedback_text import words
from autograder.pipeline.job.static_scan import scan_source

# Builtins that reach into the interpreter (a name's value by its text, the globals, code from text).
REACHING = {"exec", "eval", "compile", "globals", "locals", "vars", "getattr", "setattr", "delattr", "__import__",
            "open", "input", "breakpoint", "exit", "quit", "help"}
BUILTIN_NAMES = frozenset(dir(builtins))
DEFINITION_NODES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
MISSING_NAME = re.compile(r"NameError: name '(\w+)' is not defined")


@dataclass(frozen=True)
class Omission:
    """A statement the clean re-run left out: where, what it binds, and the names it read that it lacked."""

    cell: str  # the answer's grade id, or the number of a cell the student added (the notebook's first is 1)
    line: int
    names: frozenset[str]
    lacking: tuple[str, ...]  # empty: the statement is top-level code, not a definition


@dataclass(frozen=True)
class Stop:
    """One of the student's cells that raised in the clean re-run: what its kept code would have defined after."""

    cell: str
    names: frozenset[str]
    error: str


@dataclass
class Kept:
    """The kept code of one cell, the names it binds and what it left out."""

    code: str
    bound: set[str] = field(default_factory=set)
    omissions: list[Omission] = field(default_factory=list)


def binds(node: ast.stmt) -> set[str]:
    """The top-level names a statement binds, those of the statements inside an ``if`` or ``try`` included."""
    if isinstance(node, ast.If | ast.Try):
        inner = [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
        inner += [statement for handler in getattr(node, "handlers", []) for statement in handler.body]
        return set().union(*map(binds, inner))
    return bound_names(node)


def reads(expression: ast.AST) -> set[str]:
    """The free names an expression reads (a comprehension's variables and a lambda's parameters are its own)."""
    nodes = list(ast.walk(expression))
    own = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    own |= {n.arg for n in nodes if isinstance(n, ast.arg)}
    return {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - own


def reaches_in(expression: ast.AST) -> bool:
    """Whether an expression reaches into the interpreter: :data:`REACHING`, dunder names (``__loader__``),
    private attributes, a walrus, or what the tamper scan names."""
    return (
        any(
            isinstance(n, ast.NamedExpr) or (isinstance(n, ast.Attribute) and n.attr.startswith("_"))
            for n in ast.walk(expression)
        )
        or any(name in REACHING or name.startswith("__") for name in reads(expression))
        or bool(scan_source(ast.unparse(expression)))
    )


def lacking(node: ast.stmt, available: set[str]) -> set[str] | None:
    """The names a top-level statement reads that the clean re-run lacks (empty: kept); None: not a definition."""
    if isinstance(node, DEFINITION_NODES) or isinstance(node, ast.Pass):
        return set()
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # a docstring, a lone literal
        return set()
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [n for t in targets for n in (t.elts if isinstance(t, ast.Tuple) else [t])]
        if node.value is None or not all(isinstance(n, ast.Name) for n in names) or reaches_in(node.value):
            return None
        return reads(node.value) - available
    if isinstance(node, ast.If | ast.Try):
        heads = [node.test] if isinstance(node, ast.If) else [h.type for h in node.handlers if h.type]
        if any(reaches_in(head) for head in heads):
            return None
        missing = set().union(*(reads(head) - available for head in heads))
        inner = set(available) | {h.name for h in getattr(node, "handlers", []) if h.name}
        blocks = [node.body, node.orelse, getattr(node, "finalbody", [])]
        blocks += [handler.body for handler in getattr(node, "handlers", [])]
        for block in blocks:
            for statement in block:
                found = lacking(statement, inner)
                if found is None:
                    return None
                missing |= found
                inner |= binds(statement)
        return missing
    return None


def extract_definitions(source: str, protected: dict[str, str], available: set[str], cell: str = "") -> Kept:
    """The statements of ``source`` the clean re-run keeps (see the module's docstring), and those it leaves out.

    ``protected``: the notebook's own bindings (:func:`autograder.course.notebook_code.notebook_bindings`),
    which no statement may rebind but with the very import the notebook makes: a student's
    ``def check_close(*a): pass`` has no effect. ``available``: the names the clean re-run has before
    this cell; ``cell`` names the cell in the omissions.
    """
    try:
        tree = ast.parse(without_magics(source))
    except SyntaxError:
        return Kept("")
    known = set(available) | (BUILTIN_NAMES - REACHING)
    kept, result = [], Kept("")
    for node in tree.body:
        names = binds(node)
        same_import = isinstance(node, ast.Import | ast.ImportFrom) and all(
            protected.get(name) == ast.unparse(node) for name in names
        )
        missing = lacking(node, known)
        if names & (set(protected) | BUILTIN_NAMES) and not same_import:
            missing = None
        if missing == set():
            kept.append(node)
            known |= names
            result.bound |= names
        elif names:
            result.omissions.append(Omission(cell, node.lineno, frozenset(names), tuple(sorted(missing or ()))))
    result.code = ast.unparse(ast.Module(body=kept, type_ignores=[]))
    return result


def cell_bindings(source: str) -> set[str]:
    """The names the top-level statements of one of the notebook's own cells bind (none if it does not parse)."""
    try:
        return set().union(*map(binds, ast.parse(without_magics(source)).body))
    except SyntaxError:
        return set()


def explain(message: str, omissions: list[Omission], stops: list[Stop], language: str) -> str:
    """``message`` of a test that passed in the kernel and failed in the clean re-run, explained in the
    student's language when a name was missing: the line that bound it and why it was left out, or the
    cell that stopped before defining it."""
    found = MISSING_NAME.search(message)
    if not found:
        return message
    name, say = found.group(1), words(language)
    left = next((omission for omission in omissions if name in omission.names), None)
    stop = next((stop for stop in stops if name in stop.names), None)
    if left is None and stop is not None:
        return say["clean_missing_stopped"].format(name=name, cell=stop.cell, error=stop.error.splitlines()[0])
    if left is None:
        return say["clean_missing_nowhere"].format(name=name)
    where = say["clean_where"].format(line=left.line, cell=left.cell)
    if left.lacking:
        lacks = ", ".join(f"`{lacked}`" for lacked in left.lacking)
        return say["clean_missing_state"].format(name=name, where=where, lacking=lacks)
    return say["clean_missing_code"].format(name=name, where=where)
