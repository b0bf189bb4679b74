"""Which graded test cells lean on names another graded test cell binds.

nbgrader runs every cell and goes on after a failure, but a name bound after a failing line
of one test cell is never bound: a later test cell that reads it fails with ``NameError``,
and a student who broke one property loses another's points. A test cell may read what the
notebook's setup, the answers and the other ordinary code cells bind, and what it binds
itself. A helper shared by several test cells is allowed only when the cell that defines it
binds it before anything in that cell can fail (imports, ``def``, ``class``, and assignments
that call nothing but library modules, builtins and the cell's own earlier helpers that do not
call the answers).

The analysis reads the solution notebook's code with :mod:`ast`, hidden tests included.
"""

import ast
import builtins
from collections.abc import Iterable
from dataclasses import dataclass

from nbformat import NotebookNode

from autograder.course.notebooks import grade_id, is_answer_cell, is_graded_test_cell

BUILTINS = frozenset(dir(builtins))
SAFE_STATEMENTS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Pass)


@dataclass(frozen=True)
class Coupling:
    """Test cell ``reader`` reads ``name``, which only test cell ``binder`` binds, after a line that can fail."""

    reader: str
    name: str
    binder: str

    def __str__(self) -> str:
        return (
            f"test cell {self.reader} reads {self.name!r}, bound only by test cell {self.binder} "
            "after a line that can fail: bind it in the setup cell, in the cell that reads it, "
            f"or before the first check of {self.binder}"
        )


def bound_names(node: ast.AST) -> set[str]:
    """Every name ``node`` binds anywhere (targets, defs, imports, parameters, comprehension variables)."""
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store | ast.Del):
            names.add(child.id)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(child.name)
        elif isinstance(child, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in child.names)
        elif isinstance(child, ast.arg):
            names.add(child.arg)
        elif isinstance(child, ast.ExceptHandler) and child.name:
            names.add(child.name)
    return names


def top_level_bound(statement: ast.stmt) -> set[str]:
    """The module-level names one top-level statement binds (not those inside its functions)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    return bound_names(statement) - _inner_function_names(statement)


def _inner_function_names(statement: ast.stmt) -> set[str]:
    inner: set[str] = set()
    for child in ast.walk(statement):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            for grandchild in ast.iter_child_nodes(child):
                inner |= bound_names(grandchild)
    return inner


def loaded_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def library_modules(cells: Iterable[NotebookNode]) -> set[str]:
    """Names that ``import x`` / ``import x as y`` / ``from x import module`` bind in ordinary cells."""
    modules = set()
    for cell in cells:
        for node in ast.walk(_parse(cell.source)):
            if isinstance(node, ast.Import):
                modules.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                modules.update(alias.asname or alias.name for alias in node.names if alias.name.islower()
                               and not alias.name.startswith("check"))
    return modules


def can_fail(statement: ast.stmt, safe_callees: set[str]) -> bool:
    """Whether ``statement`` may raise: anything but imports, defs and calls into library modules."""
    if isinstance(statement, SAFE_STATEMENTS):
        return False
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return False
    if not isinstance(statement, ast.Assign | ast.AnnAssign):
        return True
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and _callee_root(node.func) not in safe_callees:
            return True
    return False


def _callee_root(func: ast.expr) -> str | None:
    while isinstance(func, ast.Attribute | ast.Call | ast.Subscript):
        func = func.value if not isinstance(func, ast.Call) else func.func
    return func.id if isinstance(func, ast.Name) else None


def safe_bindings(tree: ast.Module, safe_callees: set[str], answer_names: set[str]) -> set[str]:
    """The names a cell binds before its first statement that can fail.

    A class or function the cell defines there is safe to call later in that prefix when it reads
    no name an answer cell binds (a stand-in model, say, built from library layers).
    """
    names: set[str] = set()
    callees = set(safe_callees)
    for statement in tree.body:
        if can_fail(statement, callees):
            break
        names |= top_level_bound(statement)
        if isinstance(statement, ast.FunctionDef | ast.ClassDef) and not loaded_names(statement) & answer_names:
            callees.add(statement.name)
    return names


def _parse(source: str) -> ast.Module:
    # IPython magics and shell lines are not Python; the course's cells have none that bind names.
    lines = [line if not line.lstrip().startswith(("%", "!")) else "" for line in source.splitlines()]
    return ast.parse("\n".join(lines))


def couplings(nb: NotebookNode) -> list[Coupling]:
    """Every name a graded test cell reads that only an earlier test cell binds, after a line that can fail."""
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    ordinary = [cell for cell in code if not is_graded_test_cell(cell)]
    ordinary_names = set().union(*(bound_names(_parse(cell.source)) for cell in ordinary))
    answer_names = {
        name for cell in code if is_answer_cell(cell) for s in _parse(cell.source).body for name in top_level_bound(s)
    }
    safe_callees = library_modules(ordinary) | BUILTINS
    tests = [(grade_id(cell), _parse(cell.source)) for cell in code if is_graded_test_cell(cell)]
    found = []
    for position, (reader, tree) in enumerate(tests):
        free = loaded_names(tree) - bound_names(tree) - ordinary_names - BUILTINS
        for binder, binder_tree in tests[:position] + tests[position + 1 :]:
            shared = free & {name for s in binder_tree.body for name in top_level_bound(s)}
            found += [
                Coupling(reader, name, binder)
                for name in sorted(shared - safe_bindings(binder_tree, safe_callees, answer_names))
            ]
    return found
