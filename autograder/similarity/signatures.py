"""Calls of functions and classes whose signature is known, their arguments put in one form.

A copier writes ``attention(q, k, v, mask=m)`` where the source wrote ``attention(q, k, v, m)``.
:mod:`.spellings` binds the library's calls from a table; this module binds the calls of everything
whose ``def`` the report can read (which: docs/similarity.md, "What is compared", *calls of every
function and class whose def the report can read*).

A bound call lists its positional parameters in order, positionally; a parameter left out before
one given takes its default written out, and trailing arguments equal to their default are
dropped; keyword-only arguments stay keywords, in the signature's order. A call that does not fit
its signature (or passes ``*args``/``**kwargs``) is left as it is.
"""

import ast
import copy
import functools
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autograder.similarity.trees import walk

COURSE_PACKAGE = "tfcourse"
MODULE_LISTS = frozenset({"ModuleList", "Sequential"})  # ``nn.ModuleList([C(...) for ...])``: a list of C


@dataclass(frozen=True)
class Signature:
    """A ``def``'s parameters, ``self`` left out for a method or a class (its ``__init__``)."""

    positional: tuple[str, ...]
    defaults: dict[str, ast.expr] = field(default_factory=dict, hash=False)
    keyword_only: tuple[str, ...] = ()
    keyword_defaults: dict[str, ast.expr] = field(default_factory=dict, hash=False)
    more_keywords: bool = False  # **kwargs


Signatures = Mapping[str, Signature]  # function or class name -> signature; "Class.method" for methods


def signature_of(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> Signature | None:
    arguments = function.args
    if arguments.posonlyargs:  # rare; positional-only parameters cannot be passed by keyword anyway
        return None
    names = [a.arg for a in arguments.args][1 if method else 0 :]
    if method and not arguments.args:
        return None
    defaults = dict(zip(reversed([a.arg for a in arguments.args]), reversed(arguments.defaults), strict=False))
    keyword_defaults = {a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d}
    return Signature(
        tuple(names),
        {name: value for name, value in defaults.items() if name in names},
        tuple(a.arg for a in arguments.kwonlyargs),
        keyword_defaults,
        arguments.kwarg is not None,
    )


def defined(tree: ast.Module) -> dict[str, Signature]:
    """The signatures of the functions and classes ``tree`` defines at its top level (a class's ``__init__`` as
    the class, its other methods as ``Class.method``)."""
    found: dict[str, Signature] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.decorator_list:
            if (signature := signature_of(node, method=False)) is not None:
                found[node.name] = signature
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and not method.decorator_list:
                    name = node.name if method.name == "__init__" else f"{node.name}.{method.name}"
                    if (signature := signature_of(method, method=True)) is not None:
                        found[name] = signature
    return found


def parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def signatures_of(code: str) -> dict[str, Signature]:
    """What :func:`defined` finds in ``code`` (the student's added cells); nothing when it does not parse."""
    tree = parse(code)
    return defined(tree) if tree is not None else {}


@functools.cache
def course_module(module: str) -> ast.Module | None:
    """The source of one of the course package's modules, parsed (not imported); read-only."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return parse(Path(spec.origin).read_text(encoding="utf-8"))


def course_signatures(release_code: str) -> dict[str, Signature]:
    """The course's signatures for one notebook: what its release defines, and what it imports from the
    course's package (public names only, with their methods)."""
    tree = parse("\n".join(line for line in release_code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    if tree is None:
        return {}
    found: dict[str, Signature] = {}
    for node in tree.body:
        if not (isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == COURSE_PACKAGE):
            continue
        source = course_module(node.module)
        if source is None:
            continue
        offered = defined(source)
        for alias in node.names:
            if alias.name.startswith("_"):
                continue
            local = alias.asname or alias.name
            for name, signature in offered.items():
                if name == alias.name or name.startswith(f"{alias.name}."):
                    found[local + name[len(alias.name) :]] = signature
    return found | defined(tree)


def same_value(first: ast.expr, second: ast.expr) -> bool:
    return ast.dump(first) == ast.dump(second)


def bind(call: ast.Call, signature: Signature) -> None:
    """``call``'s arguments in the one form of the module's docstring (in place); unchanged when they do not fit."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return
    names = signature.positional
    if len(call.args) > len(names):
        return
    given: dict[str, ast.expr] = dict(zip(names, call.args, strict=False))
    keywords: dict[str, ast.expr] = {}
    for keyword in call.keywords:
        if keyword.arg in given or keyword.arg in keywords:
            return
        if keyword.arg in names:
            given[keyword.arg] = keyword.value
        elif keyword.arg in signature.keyword_only or signature.more_keywords:
            keywords[keyword.arg] = keyword.value
        else:
            return
    if any(name not in given and name not in signature.defaults for name in names):
        return
    if any(name not in keywords and name not in signature.keyword_defaults for name in signature.keyword_only):
        return
    values = [given.get(name) or copy.deepcopy(signature.defaults[name]) for name in names]
    while (
        values
        and names[len(values) - 1] in signature.defaults
        and same_value(values[-1], signature.defaults[names[len(values) - 1]])
    ):
        values.pop()
    order = {name: index for index, name in enumerate(signature.keyword_only)}
    call.args = values
    call.keywords = [
        ast.keyword(name, value)
        for name, value in sorted(keywords.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))
        if name not in signature.keyword_defaults or not same_value(value, signature.keyword_defaults[name])
    ]


def class_name(value: ast.expr) -> tuple[str, bool] | None:
    """``C`` for ``C(...)``, and whether it is a list of them (``nn.ModuleList([C(...) for ...])``)."""
    if not isinstance(value, ast.Call):
        return None
    if isinstance(value.func, ast.Name):
        return value.func.id, False
    if isinstance(value.func, ast.Attribute) and value.func.attr in MODULE_LISTS and value.args:
        inner = value.args[0]
        if isinstance(inner, ast.ListComp | ast.GeneratorExp) and isinstance(inner.elt, ast.Call):
            if isinstance(inner.elt.func, ast.Name):
                return inner.elt.func.id, True
    return None


def self_attribute(node: ast.expr) -> str | None:
    """``a`` for ``self.a``; None for anything else."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def kept_modules(cls: ast.ClassDef, known: Signatures) -> tuple[dict[str, str], dict[str, str]]:
    """The modules a class keeps as ``self.a = C(...)`` (a -> C) and the lists of them (a -> C), C known."""
    single: dict[str, str] = {}
    lists: dict[str, str] = {}
    for node in walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and (name := self_attribute(node.targets[0])):
            found = class_name(node.value)
            if found and found[0] in known:
                (lists if found[1] else single)[name] = found[0]
    return single, lists


class Binder(ast.NodeTransformer):
    """Every call whose signature is known, bound (see the module)."""

    def __init__(self, known: Signatures):
        self.known = known
        self.cls = ""  # the class whose methods are being visited
        self.modules: dict[str, str] = {}  # self.a -> its class
        self.lists: dict[str, str] = {}  # self.a (a list of modules) -> their class
        self.loop: dict[str, str] = {}  # a loop's name over such a list -> its class

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        outer = self.cls, self.modules, self.lists
        self.cls = node.name
        self.modules, self.lists = kept_modules(node, self.known)
        self.generic_visit(node)
        self.cls, self.modules, self.lists = outer
        return node

    def visit_For(self, node: ast.For) -> ast.For:
        name = self_attribute(node.iter)
        if name in self.lists and isinstance(node.target, ast.Name):
            outer = dict(self.loop)
            self.loop[node.target.id] = self.lists[name]
            self.generic_visit(node)
            self.loop = outer
            return node
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if signature := self.known.get(self.callee(node.func) or ""):
            bind(node, signature)
        return node

    def callee(self, func: ast.expr) -> str | None:
        """The name under which ``func``'s signature is known, or None: ``f``, ``Class.method`` for
        ``self.method``, ``Class.forward`` for a kept module (``self.a``) or a loop over a kept list of them."""
        if isinstance(func, ast.Name):
            return f"{self.loop[func.id]}.forward" if func.id in self.loop else func.id
        attribute = self_attribute(func)
        if attribute is None or not self.cls:
            return None
        if attribute in self.modules:
            return f"{self.modules[attribute]}.forward"
        return f"{self.cls}.{attribute}"


def bind_calls(tree: ast.Module, known: Signatures) -> ast.Module:
    """``tree`` with its calls bound to ``known`` and to what ``tree`` defines itself (which comes first)."""
    Binder({**known, **defined(tree)}).visit(tree)
    return tree
