"""The clean re-run: the graded tests again, in a fresh process, with only the student's definitions.

The kernel run executes the hidden tests after the student's top-level code, in the
student's kernel. The clean re-run executes the *source* notebook in a fresh zygote child
(:mod:`autograder.isolated.run_plan`; the child has only imported the notebook's modules, is
sandboxed like the kernel and has no network), with each answer cell replaced by only the
imports, functions, classes and constant assignments of the student's answer
(:func:`extract_definitions`) and the definitions of cells the student added placed where
the kernel saw them (:func:`added_definitions`); top-level statements of the student never
run. A test the kernel passed but the clean re-run fails scores nothing.
"""

import ast
import builtins
import json
import shutil
from pathlib import Path

from nbformat import NotebookNode

from autograder.course.hidden_messages import translate_hidden_tests
from autograder.course.notebook_code import bound_names, notebook_bindings, without_magics
from autograder.course.notebooks import cell_key, edition, grade_id, is_answer_cell, is_graded_test_cell
from autograder.isolated.protocol import CleanRerunRequest, PlanCell
from autograder.launch.limits import Limits
from autograder.launch.zygote import Zygote

BUILTIN_NAMES = set(dir(builtins))
DEFINITION_NODES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def is_constant_assignment(node: ast.AST) -> bool:
    """``NEG_INF = -1e9``: a plain name bound to an expression that calls nothing."""
    if not isinstance(node, ast.Assign | ast.AnnAssign) or getattr(node, "value", None) is None:
        return False
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return all(isinstance(t, ast.Name) for t in targets) and not any(
        isinstance(n, ast.Call | ast.Lambda | ast.NamedExpr) for n in ast.walk(node.value)
    )


def extract_definitions(source: str, protected: dict[str, str] | None = None) -> str:
    """The imports, functions, classes and constant assignments of an answer cell, nothing else.

    A statement that binds a ``protected`` name (what the notebook itself defines: ``torch``,
    ``check_close``, ...) is dropped, unless it is the very import the notebook makes; builtins
    cannot be shadowed either. So a student's ``def check_close(*a): pass`` has no effect.
    """
    try:
        tree = ast.parse(without_magics(source))
    except SyntaxError:
        return ""
    protected = protected or {}
    kept = []
    for node in tree.body:
        if not (isinstance(node, DEFINITION_NODES) or is_constant_assignment(node)):
            continue
        names = bound_names(node)
        same_import = isinstance(node, ast.Import | ast.ImportFrom) and all(
            protected.get(name) == ast.unparse(node) for name in names
        )
        if names & (set(protected) | BUILTIN_NAMES) and not same_import:
            continue
        kept.append(node)
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def added_definitions(student: NotebookNode, source: NotebookNode, protected: dict[str, str]) -> dict[str, str]:
    """The definitions in the code cells the student added, by the grade id of the first graded cell below them.

    A student's scratch cell may define a helper that an answer calls; the clean re-run defines
    it too, just before that graded cell, as the kernel did. A cell whose text is one of the
    notebook's own cells is not the student's. Only definitions count (see :func:`extract_definitions`).
    """
    own = {cell.source.strip() for cell in source.cells if cell.cell_type == "code"}
    placed: dict[str, str] = {}
    pending: list[str] = []
    for cell in student.cells:
        if cell.cell_type != "code":
            continue
        if grade_id(cell):
            if pending:
                placed[grade_id(cell)] = "\n\n".join(filter(None, [placed.get(grade_id(cell)), *pending]))
                pending = []
        elif cell.source.strip() not in own:
            pending += [code for code in [extract_definitions(cell.source, protected)] if code.strip()]
    return placed


def clean_plan(
    student: NotebookNode, source: NotebookNode, cell_limits: dict[str, float] | None = None
) -> tuple[PlanCell, ...]:
    """The source notebook's code cells in order, as plain Python, answers swapped for the student's definitions.

    Definitions from cells the student added go in just before the first graded cell below them. The hidden
    tests' messages are in the student's edition (:mod:`autograder.course.hidden_messages`).
    A cell of the source with a limit in ``cell_limits`` (by :func:`cell_key`) carries it.
    """
    answers: dict[str, str] = {}
    for cell in student.cells:
        if cell.cell_type == "code" and grade_id(cell) and is_answer_cell(cell):
            answers.setdefault(grade_id(cell), cell.source)
    protected = notebook_bindings(source)
    added = added_definitions(student, source, protected)
    limits, language = cell_limits or {}, edition(student)
    plan: list[PlanCell] = []
    for cell in source.cells:
        if cell.cell_type != "code":
            continue
        if grade_id(cell) in added:
            plan.append(PlanCell("added", grade_id(cell), added[grade_id(cell)]))
        if is_answer_cell(cell):
            kind, code = "answer", extract_definitions(answers.get(grade_id(cell), ""), protected)
        else:
            text = translate_hidden_tests(cell.source, language)  # hidden messages in the student's language
            kind, code = "test" if is_graded_test_cell(cell) else "setup", without_magics(text)
        limit = limits.get(cell_key(cell))
        plan.append(PlanCell(kind, grade_id(cell) or "", code, limit))
    # What comes after the last test (summary figures, extensions) cannot change a result.
    last_test = max((i for i, cell in enumerate(plan) if cell.kind == "test"), default=-1)
    return tuple(plan[: last_test + 1])


def clean_rerun(
    student: NotebookNode,
    source: NotebookNode,
    limits: Limits,
    zygote: Zygote,
    cell_limits: dict[str, float] | None = None,
) -> dict[str, dict]:
    """Run the clean plan in a child of ``zygote`` under ``limits``; ``{grade_id: {"passed", "message"}}``.

    A test that has no result (the run died or timed out before it) counts as failed, and so
    does one whose result the student's code could have forged into something malformed.
    """
    plan = clean_plan(student, source, cell_limits)
    workdir = zygote.job_folder()
    results_path = workdir / "clean_results.json"
    try:
        request = CleanRerunRequest(plan, str(results_path), limits.cell_timeout, edition(student))
        outcome = zygote.run(request, limits, workdir)
        results = read_results(results_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    why = "timed out" if outcome.timed_out else f"ended early (exit {outcome.returncode})"
    for cell in plan:
        if cell.kind == "test" and cell.grade_id not in results:
            results[cell.grade_id] = {"passed": False, "message": f"the clean re-run {why}"}
    return results


def read_results(path: Path) -> dict[str, dict]:
    """The clean run's results file, keeping only well-formed entries; a link (to anywhere) is ignored."""
    try:
        if path.is_symlink():
            return {}
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        name: {"passed": entry["passed"], "message": str(entry.get("message", ""))[:2000]}
        for name, entry in data.items()
        if isinstance(entry, dict) and isinstance(entry.get("passed"), bool)
    }
