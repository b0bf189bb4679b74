"""The clean re-run: the graded tests again, in a fresh process, with only the student's definitions.

The kernel run executes the hidden tests after the student's top-level code, in the student's kernel. The clean
re-run executes the *source* notebook in a fresh zygote child (:mod:`autograder.isolated.run_plan`), each answer
cell replaced by what the rule of :mod:`autograder.pipeline.job.kept_code` keeps of the student's answer, and what
it keeps of the cells the student added placed where the kernel saw them (:func:`added_cells`); nothing the
student's kernel held reaches a test (the step in the grader's phases: docs/maintainers.md). It also scores the
tests when the kernel run did not finish (a kernel that died, a job past its wall limit): a loop or a crash costs
the tests that meet it, not the whole notebook.
"""

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from autograder.course.hidden_messages import translate_hidden_tests
from autograder.course.notebook_code import notebook_bindings, without_magics
from autograder.course.notebooks import cell_key, edition, grade_id, is_answer_cell, is_graded_test_cell
from autograder.isolated.protocol import CleanRerunRequest, PlanCell
from autograder.launch.limits import Limits
from autograder.launch.zygote import Zygote
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.kept_code import Omission, Stop, cell_bindings, explain, extract_definitions
from autograder.pipeline.job.kernel_run import KernelRun
from autograder.pipeline.storage.results import timed
from tfcourse.hosted import edition_neutral


def added_cells(student: NotebookNode, source: NotebookNode) -> dict[str, list[tuple[int, str]]]:
    """The code cells the student added, ``(index, text)``, by the grade id of the first graded cell below them.

    A student's scratch cell may define a helper that an answer calls; the clean re-run keeps its
    definitions too, just before that graded cell, as the kernel saw them. A cell whose text is one
    of the notebook's own cells (the setup cell naming any edition) is not the student's.
    """
    own = {edition_neutral(cell.source).strip() for cell in source.cells if cell.cell_type == "code"}
    placed: dict[str, list[tuple[int, str]]] = {}
    pending: list[tuple[int, str]] = []
    for index, cell in enumerate(student.cells):
        if cell.cell_type != "code":
            continue
        if grade_id(cell):
            placed.setdefault(grade_id(cell), []).extend(pending)
            pending = []
        elif edition_neutral(cell.source).strip() not in own:
            pending.append((index, cell.source))
    return {name: cells for name, cells in placed.items() if cells}


@dataclass(frozen=True)
class CleanPlan:
    """The cells the clean re-run runs, the statements of the student's it left out, and what each of the
    student's plan cells (``"answer <grade id>"``, ``"added <grade id>"``) defines: ``(its name, names)``."""

    cells: tuple[PlanCell, ...]
    omissions: tuple[Omission, ...]
    defines: dict[str, tuple[str, frozenset[str]]]


def clean_plan(student: NotebookNode, source: NotebookNode, cell_limits: dict[str, float] | None = None) -> CleanPlan:
    """The source notebook's code cells in order, as plain Python, answers swapped for what the rule keeps.

    The rule is :mod:`autograder.pipeline.job.kept_code`'s. What cells the student added keep goes in just
    before the first graded cell below them. The hidden tests' messages are in the student's edition
    (:mod:`autograder.course.hidden_messages`). A cell of the source with a limit in ``cell_limits``
    (by :func:`cell_key`) carries it.
    """
    answers: dict[str, str] = {}
    for cell in student.cells:
        if cell.cell_type == "code" and grade_id(cell) and is_answer_cell(cell):
            answers.setdefault(grade_id(cell), cell.source)
    protected = notebook_bindings(source)
    added = added_cells(student, source)
    limits, language = cell_limits or {}, edition(student)
    plan: list[PlanCell] = []
    omissions: list[Omission] = []
    available: set[str] = set()  # the names the clean re-run has bound so far

    defines: dict[str, tuple[str, frozenset[str]]] = {}

    def keep(text: str, cell: str, key: str) -> str:
        kept = extract_definitions(text, protected, available, cell)
        available.update(kept.bound)
        omissions.extend(kept.omissions)
        label, names = defines.get(key, ("", frozenset()))
        defines[key] = (", ".join(filter(None, [label, cell])), names | kept.bound)
        return kept.code

    for cell in source.cells:
        if cell.cell_type != "code":
            continue
        if grade_id(cell) in added:
            key = f"added {grade_id(cell)}"
            codes = [keep(text, f"{index + 1}", key) for index, text in added[grade_id(cell)]]
            plan.append(PlanCell("added", grade_id(cell), "\n\n".join(filter(str.strip, codes))))
        if is_answer_cell(cell):
            kind, code = "answer", keep(answers.get(grade_id(cell), ""), grade_id(cell), f"answer {grade_id(cell)}")
        else:
            text = translate_hidden_tests(cell.source, language)  # hidden messages in the student's language
            kind, code = "test" if is_graded_test_cell(cell) else "setup", without_magics(text)
            available.update(cell_bindings(cell.source))
        limit = limits.get(cell_key(cell))
        plan.append(PlanCell(kind, grade_id(cell) or "", code, limit))
    # What comes after the last test (summary figures, extensions) cannot change a result.
    last_test = max((i for i, cell in enumerate(plan) if cell.kind == "test"), default=-1)
    return CleanPlan(tuple(plan[: last_test + 1]), tuple(omissions), defines)


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
        request = CleanRerunRequest(plan.cells, str(results_path), limits.cell_timeout, edition(student))
        outcome = zygote.run(request, limits, workdir)
        results = read_results(results_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    why = "timed out" if outcome.timed_out else f"ended early (exit {outcome.returncode})"
    for cell in plan.cells:
        if cell.kind == "test" and cell.grade_id not in results:
            results[cell.grade_id] = {"passed": False, "message": f"the clean re-run {why}"}
    stops = [Stop(*plan.defines[key], results.pop(key)["message"]) for key in list(results) if key in plan.defines]
    for result in results.values():
        result["explained"] = explain(result["message"], list(plan.omissions), stops, edition(student))
    return results


def needs_clean_rerun(job: GradeJob, kernel: KernelRun) -> bool:
    """Whether the clean re-run has something to decide: the tests' scores when the kernel run did not finish, and,
    unless the job turns it off, whether to take back the points the kernel run gave."""
    return not kernel.finished or (job.clean_rerun and any(kernel.scores.values()))


def rerun_cleanly(job: GradeJob, zygotes: dict[str, Zygote], notebooks: dict[str, NotebookNode],
                  sources: dict[str, NotebookNode], phases: dict[str, float]) -> dict[str, dict[str, dict]]:
    """``{notebook: {grade_id: verdict}}``: each notebook's clean re-run in its started zygote of ``zygotes``."""
    verdicts = {}
    for name, notebook in notebooks.items():
        cell_limits = job.cell_limits.of(name) if job.cell_limits else None
        with timed(phases, "clean re-run"):
            verdicts[name] = clean_rerun(notebook, sources[name], job.limits, zygotes[name], cell_limits)
    return verdicts


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
