"""One grading job: one student's assignment, graded in isolation, as a picklable result.

:func:`grade_submission` is a sequence of named steps, each in its own module: read the
notebooks, repair and scan them (:mod:`~autograder.pipeline.job.submission_files`), run nbgrader's
autograde in the student's kernel and keep the autograded copies for formgrader
(:mod:`~autograder.pipeline.job.kernel_run`), re-run the graded tests cleanly, award the points and
say why (:mod:`~autograder.pipeline.job.verdict`). Nothing the submission does makes it raise.
"""

import time
from collections.abc import Iterable

import nbformat
from nbformat import NotebookNode

from autograder.launch.zygote import start_together
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.kernel_run import keep_autograded, kernel_run_zygotes, run_in_kernel
from autograder.pipeline.job.submission_files import expected_notebooks, read_notebooks, repair_and_scan
from autograder.pipeline.job.verdict import award, clean_rerun_zygote, rerun_cleanly, settle_status
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import Status, SubmissionResult, TestResult, folder_digest, timed


def start_zygotes(job: GradeJob, sources: dict[str, NotebookNode], phases: dict[str, float]) -> None:
    """Start this worker's zygotes for ``job`` side by side, those of the clean re-run too (a no-op once running).

    Each start imports seconds of modules. Launched together, their imports overlap on the cores;
    ``grade`` has every worker do this in a task of its own (``warm_up``) before its first job.
    """
    zygotes = list(kernel_run_zygotes(job, sources))
    if job.clean_rerun:
        zygotes += [clean_rerun_zygote(job, source) for source in sources.values()]
    with timed(phases, "zygote start"):
        start_together(zygotes)


def source_notebooks(job: GradeJob, names: Iterable[str]) -> dict[str, NotebookNode]:
    folder = job.course.source_folder(job.assignment)
    return {name: nbformat.read(folder / f"{name}.ipynb", as_version=4) for name in names}


def warm_up(job: GradeJob) -> None:
    """Start a worker's zygotes for ``job``'s assignment before its first job (run as a task of its own).

    It needs no gradebook: the notebooks are those of the assignment's source folder.
    """
    names = sorted(path.stem for path in job.course.source_folder(job.assignment).glob("*.ipynb"))
    start_zygotes(job, source_notebooks(job, names), {})


def grade_submission(job: GradeJob) -> SubmissionResult:
    """Grade one submission; never raises for anything the submission does."""
    start = time.monotonic()
    result = SubmissionResult(job.assignment, job.student, Status.GRADED, digest=folder_digest(job.submission))
    with timed(result.phases, "read and scan"):
        cells = job.cells or gradebook.grade_cells(job.template_db, job.assignment)
    result.tests = [TestResult(c.notebook, c.grade_id, c.max_score) for c in cells if c.autograded]
    with timed(result.phases, "read and scan"):
        notebooks, problems = read_notebooks(job, expected_notebooks(cells), result)
    if not notebooks:
        result.status = Status.UNREADABLE if any("unreadable" in p for p in problems) else Status.MISSING
        result.reason = "; ".join(problems)
    else:
        with timed(result.phases, "read and scan"):
            sources = source_notebooks(job, notebooks)
            repair_and_scan(job, notebooks, sources, result)
        start_zygotes(job, sources, result.phases)
        kernel = run_in_kernel(job, notebooks, sources, result.phases)
        with timed(result.phases, "keep autograded"):
            keep_autograded(kernel.autograded, job)
        clean = rerun_cleanly(job, notebooks, sources, kernel, result.phases)
        award(job, result, kernel, clean)
        settle_status(job, result, kernel, problems + kernel.problems)
    result.seconds = time.monotonic() - start
    return result
