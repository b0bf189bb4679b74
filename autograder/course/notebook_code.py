"""What the code cells of a notebook define and import, read with ``ast`` (never run).

Both halves of the tamper defence need this: the static scan (:mod:`autograder.pipeline.job.static_scan`)
to tell the notebook's own names from a student's rebinding of them, and the clean re-run
(:mod:`autograder.pipeline.job.clean_rerun`) to keep only definitions and to know what to preload.
"""

import ast
from collections.abc import Iterator

from nbformat import NotebookNode

from autograder.course.notebooks import is_answer_cell


def without_magics(source: str) -> str:
    """Drop IPython-only lines (``%matplotlib inline``, ``!pip ...``), which plain Python cannot run."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


def dotted_name(node: ast.AST) -> str:
    """``torch.nn.functional.softmax`` for the expression of that name, '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def bound_names(node: ast.AST) -> set[str]:
    """The top-level names a definition, import or assignment binds."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {target.id for target in targets if isinstance(target, ast.Name)}


def own_statements(source: NotebookNode) -> Iterator[ast.stmt]:
    """The top-level statements of the source notebook's own (non-answer) code cells, in order."""
    for cell in source.cells:
        if cell.cell_type != "code" or is_answer_cell(cell):
            continue
        try:
            yield from ast.parse(without_magics(cell.source)).body
        except SyntaxError:
            continue


def notebook_bindings(source: NotebookNode) -> dict[str, str]:
    """``{name: the statement that binds it}`` for the source notebook's own (non-answer) code.

    Imports keep their text (a student may repeat the very same import); other bindings map to ''.
    """
    bindings: dict[str, str] = {}
    for node in own_statements(source):
        for name in bound_names(node):
            bindings[name] = ast.unparse(node) if isinstance(node, ast.Import | ast.ImportFrom) else ""
    return bindings


def notebook_modules(source: NotebookNode) -> tuple[str, ...]:
    """The modules the notebook's own code imports, in order: what a zygote for its kernels preloads."""
    modules: dict[str, None] = {}
    for node in own_statements(source):
        if isinstance(node, ast.Import):
            modules.update(dict.fromkeys(alias.name for alias in node.names))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules[node.module] = None
    return tuple(modules)
