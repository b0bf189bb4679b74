"""What an answer holds that does not change what it computes: annotations, checks and dead code.

A copier pads a copy with type hints, ``assert`` lines and code that never runs or is never
read; each is a rare statement in a class, so it would weigh the most in the fingerprints and
hide the copy best. :func:`strip` removes them in place (docs/similarity.md, "What is compared":
*what does not change the result goes*, *what only runs when the answer fails, and logging, go*). A
check or a fallback matters only where the answer fails, which the grader's tests see (:mod:`.behaviour`).
"""

import ast
import re
from collections.abc import Iterable

from autograder.similarity.trees import blocks, walk

Function = ast.FunctionDef | ast.AsyncFunctionDef
NEUTRAL = {ast.Mult: 1, ast.Div: 1, ast.Add: 0, ast.Sub: 0, ast.Pow: 1}  # e <op> neutral == e
COMMUTES = (ast.Mult, ast.Add)  # neutral <op> e == e too
ANNOTATION_MODULES = frozenset({"typing", "__future__"})
LOGGING_MODULES = frozenset({"logging", "warnings"})
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})


def raises_assertion(statement: ast.stmt) -> bool:
    """``raise AssertionError`` or ``raise AssertionError(...)``."""
    if not isinstance(statement, ast.Raise) or statement.exc is None:
        return False
    raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
    return isinstance(raised, ast.Name) and raised.id == "AssertionError"


def constant(node: ast.expr) -> object:
    return node.value if isinstance(node, ast.Constant) else NotImplemented


def is_neutral(node: ast.expr, neutral: int) -> bool:
    value = constant(node)
    return value == neutral and not isinstance(value, bool)


def loggers(tree: ast.AST) -> set[str]:
    """The names bound to ``logging.getLogger(...)`` anywhere in ``tree``."""
    return {
        target.id
        for node in walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and logging_call(node.value, set())
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def logging_call(call: ast.Call, names: set[str]) -> bool:
    """``print(...)``, ``logging.f(...)``, ``warnings.warn(...)``, or a log method of one of ``names`` (loggers)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "print"
    if not isinstance(func, ast.Attribute):
        return False
    root = func.value
    while isinstance(root, ast.Attribute | ast.Call):
        root = root.value if isinstance(root, ast.Attribute) else root.func
    if not isinstance(root, ast.Name):
        return False
    return root.id in LOGGING_MODULES or (root.id in names and func.attr in LOG_METHODS)


class Strip(ast.NodeTransformer):
    """Annotations, asserts, constant branches, bare expressions, fallbacks, logging and no-op arithmetic (see
    the module)."""

    def __init__(self, names: set[str] | None = None):
        self.loggers = names or set()

    def visit_Try(self, node: ast.Try) -> list[ast.stmt]:
        self.generic_visit(node)
        return [*node.body, *node.orelse, *node.finalbody]

    visit_TryStar = visit_Try

    def visit_Assign(self, node: ast.Assign) -> ast.Assign | None:
        self.generic_visit(node)
        logger = isinstance(node.value, ast.Call) and logging_call(node.value, self.loggers)
        return None if logger and all(isinstance(t, ast.Name) for t in node.targets) else node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        self.generic_visit(node)  # an emptied body becomes ``pass`` there
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt | None:
        self.generic_visit(node)
        if node.value is None:
            return None
        return ast.copy_location(ast.Assign([node.target], node.value), node)

    def visit_Assert(self, node: ast.Assert) -> None:
        return None

    def visit_Import(self, node: ast.Import) -> ast.Import | None:
        node.names = [alias for alias in node.names if alias.name not in ANNOTATION_MODULES | LOGGING_MODULES]
        return node if node.names else None

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom | None:
        return None if node.module in ANNOTATION_MODULES | LOGGING_MODULES else node

    def visit_Expr(self, node: ast.Expr) -> ast.stmt | None:
        self.generic_visit(node)
        if isinstance(node.value, ast.Call) and logging_call(node.value, self.loggers):
            return None
        return None if isinstance(node.value, ast.Constant | ast.Name) else node

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt] | None:
        self.generic_visit(node)
        if not node.orelse and len(node.body) == 1 and raises_assertion(node.body[0]):
            return None
        value = constant(node.test)
        if value is NotImplemented:
            return node
        return (node.body if value else node.orelse) or None

    def visit_While(self, node: ast.While) -> ast.AST | list[ast.stmt] | None:
        self.generic_visit(node)
        value = constant(node.test)
        if value is not NotImplemented and not value:
            return node.orelse or None
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        neutral = NEUTRAL.get(type(node.op))
        if neutral is None:
            return node
        if is_neutral(node.right, neutral):
            return node.left
        if isinstance(node.op, COMMUTES) and is_neutral(node.left, neutral):
            return node.right
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and len(block) > 1 and isinstance(block[0], ast.stmt):
                block[:] = [s for s in block if not isinstance(s, ast.Pass)] or [ast.Pass()]
        if isinstance(getattr(node, "body", None), list) and not node.body and not isinstance(node, ast.Module):
            node.body = [ast.Pass()]  # every statement of a block dropped: it still needs one
        return node


def unread_assignments(function: Function) -> bool:
    """Drop assignments to names the function never reads (nor declares global); whether one was."""
    nodes = walk(function)
    read = {node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    read |= {name for node in nodes if isinstance(node, ast.Global | ast.Nonlocal) for name in node.names}
    dropped = False
    for node in nodes:
        for block in blocks(node):
            kept = [s for s in block if not unread(s, read)]
            if len(kept) < len(block):
                block[:] = kept or [ast.Pass()]
                dropped = True
    return dropped


def unread(statement: ast.stmt, read: set[str]) -> bool:
    """An assignment whose targets are all plain names nobody reads."""
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    return bool(targets) and all(isinstance(t, ast.Name) and t.id not in read for t in targets)


def uncalled_functions(tree: ast.Module, keep: Iterable[str], elsewhere: str = "") -> None:
    """Drop the top-level functions that nothing in ``tree`` (or the ``elsewhere`` code) names, except ``keep``."""
    kept = set(keep)
    nodes = walk(tree)
    named = {n.id for n in nodes if isinstance(n, ast.Name)} | {n.attr for n in nodes if isinstance(n, ast.Attribute)}
    body = [
        s
        for s in tree.body
        if not (isinstance(s, Function) and s.name not in kept and s.name not in named and not used(s.name, elsewhere))
    ]
    tree.body[:] = body or [ast.Pass()]


def used(name: str, code: str) -> bool:
    """Whether ``code`` names ``name`` other than in its own ``def`` (as text: a cheap, generous test)."""
    return name in code and re.search(rf"(?<!def )\b{re.escape(name)}\b", code) is not None


def strip(tree: ast.Module, kept: Iterable[str] | None = None, elsewhere: str = "") -> ast.Module:
    """``tree`` without what does not change what it computes (see the module); ``kept``: None keeps every function.

    (Not named ``keep``: a grader file may hold no line of a hidden test, and one of the course's reads
    ``if keep is not None:``; tests/grader/test_kernel_reach.py walks every file student code can read.)
    """
    tree = Strip(loggers(tree)).visit(tree)
    tree.body = tree.body or [ast.Pass()]
    for function in [n for n in walk(tree) if isinstance(n, Function)]:
        while unread_assignments(function):
            pass
    if kept is not None:
        uncalled_functions(tree, kept, elsewhere)
    return tree  # no locations needed: the tree is only re-printed
