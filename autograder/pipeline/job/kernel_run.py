"""The kernel run: nbgrader's autograde of a submission in the student's kernel, isolated.

nbgrader runs in a child of a zygote that has nbgrader loaded, on a course copy that holds only this submission
beside the assignment's gradebook, in that child's private folder; its kernels are forked by a second zygote, in a
sandbox that never sees the notebook into which nbgrader puts the hidden tests back
(:mod:`autograder.isolated.autograde_child`, :mod:`autograder.isolated.kernelstub`; docs/maintainers.md). Each cell
stops at its limit (:mod:`autograder.pipeline.job.cell_limits`).
"""

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course.course import Course
from autograder.course.notebooks import grade_id, is_graded_test_cell, submission_edition
from autograder.course.paths import GRADEBOOK
from autograder.isolated.protocol import AutogradeRequest
from autograder.launch.limits import Outcome
from autograder.launch.zygote import Zygote
from autograder.pipeline.job.cell_limits import cell_seconds
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.submission_files import regular_file
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import timed

STOPPED = {"KeyboardInterrupt", "CellTimeoutError", "TimeoutError", "MemoryError", "DeadKernelError"}
MAX_OUTPUT_CHARS = 20_000  # per output, in the autograded copy kept for formgrader and feedback


@dataclass
class KernelRun:
    """What nbgrader's autograde in the student's kernel gave."""

    outcome: Outcome
    scores: dict[tuple[str, str], float] | None  # None: nbgrader saved no grades
    autograded: dict[str, NotebookNode]  # the notebooks as run, hidden tests and outputs in
    problems: list[str]

    @property
    def finished(self) -> bool:
        return self.scores is not None and not self.outcome.timed_out

def merged_cell_limits(job: GradeJob, names: Iterable[str]) -> dict[str, float]:
    """The cell limits of the submission's notebooks, in one mapping (cell keys do not clash across them)."""
    limits: dict[str, float] = {}
    for name in names:
        limits.update(job.cell_limits.of(name) if job.cell_limits else {})
    return limits

def run_in_kernel(job: GradeJob, kernels: Zygote, nbgrader: Zygote, notebooks: dict[str, NotebookNode],
                  phases: dict[str, float]) -> KernelRun:
    """nbgrader's autograde of the notebooks in a limited child of the started ``nbgrader`` zygote, its kernels forked
    by ``kernels``; steps timed in ``phases``."""
    # The kernels see only `visible`: never the notebook nbgrader runs, into which it puts the hidden tests back.
    visible, private = kernels.job_folder(), nbgrader.job_folder()  # the kernel's folder; the course copy, gradebook
    try:
        with timed(phases, "course copy"):
            course, db = Course(private / "course"), private / GRADEBOOK
            shutil.copy(job.template_db, db)
            submitted = course.grading.submitted(job.student, job.assignment)
            shutil.copytree(job.submission, submitted, symlinks=True)  # a link to the course stays a dead link
            for name, notebook in notebooks.items():
                nbformat.write(notebook, submitted / f"{name}.ipynb")
            shutil.copytree(job.submission, visible / "work", symlinks=True, ignore=shutil.ignore_patterns("*.ipynb"))
        request = AutogradeRequest(
            course=str(course.root), gradebook=str(db), assignment=job.assignment, student=job.student,
            cell_timeout=job.limits.cell_timeout, cell_limits=merged_cell_limits(job, notebooks),
            kernel_socket=str(kernels.socket_path), kernel_token=kernels.token, kernel_folder=str(visible),
            edition=submission_edition(notebooks.values()),
        )
        outcome = nbgrader.run(request, job.limits, private / "nbgrader")
        with timed(phases, "read back"):
            # nbgrader saves a submission with empty grades before it fails
            scores = gradebook.kernel_scores(db, job.assignment, job.student) if outcome.returncode == 0 else None
            autograded = read_autograded(course.grading.autograded(job.student, job.assignment), notebooks)
    finally:
        with timed(phases, "course copy"):
            shutil.rmtree(visible, ignore_errors=True)
            shutil.rmtree(private, ignore_errors=True)
    cells = sum(sum(cell_seconds(notebook).values()) for notebook in autograded.values())
    phases["kernel: cells"] = phases.get("kernel: cells", 0.0) + cells
    phases["kernel: nbgrader"] = phases.get("kernel: nbgrader", 0.0) + max(0.0, outcome.seconds - cells)
    problems = [note for name, notebook in autograded.items() for note in interrupted_cells(name, notebook)]
    return KernelRun(outcome, scores, autograded, problems)

def read_autograded(folder: Path, names: Iterable[str]) -> dict[str, NotebookNode]:
    """The autograded notebooks nbgrader wrote (a missing or broken one is left out)."""
    autograded = {}
    for name in names:
        path = folder / f"{name}.ipynb"
        if not regular_file(path):
            continue
        try:
            autograded[name] = nbformat.read(path, as_version=4)
        except Exception:  # a half-written copy is simply not kept
            continue
    return autograded

def failure_messages(notebook: NotebookNode) -> dict[str, str]:
    """``{grade_id: message}`` for the graded test cells of an autograded notebook that failed."""
    messages = {}
    for cell in notebook.cells:
        if not is_graded_test_cell(cell):
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                messages[grade_id(cell)] = f"{output.ename}: {output.evalue}"[:2000]
            elif output.output_type == "stream" and output.name == "stderr" and grade_id(cell) not in messages:
                messages[grade_id(cell)] = f"wrote to stderr: {output.text[:500]}"
    return messages

def interrupted_cells(name: str, notebook: NotebookNode) -> list[str]:
    """Notes on the ungraded cells of an autograded notebook that were stopped or ran out of memory."""
    notes = []
    for index, cell in enumerate(notebook.cells):
        stops = [o.ename for o in cell.get("outputs", []) if o.output_type == "error" and o.ename in STOPPED]
        if stops and not is_graded_test_cell(cell):
            notes.append(f"{name} cell {index}: {' + '.join(dict.fromkeys(stops))} (cell time or memory limit)")
    return notes

def cap_outputs(notebook: NotebookNode, limit: int = MAX_OUTPUT_CHARS) -> NotebookNode:
    """Shorten stream outputs so that a submission printing megabytes stays viewable."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and len(output.text) > limit:
                output.text = output.text[:limit] + f"\n... [{len(output.text) - limit} characters cut by the grader]\n"
    return notebook

def keep_autograded(autograded: dict[str, NotebookNode], job: GradeJob) -> None:
    """Write the autograded notebooks (outputs capped) to the real grading folder, for formgrader."""
    target = job.course.grading.autograded(job.student, job.assignment)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name, notebook in autograded.items():
        nbformat.write(cap_outputs(notebook), target / f"{name}.ipynb")
