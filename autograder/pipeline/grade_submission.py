"""One grading job: one student's assignment, graded in isolation, as a picklable result.

:func:`grade_submission` is a sequence of named steps, each in its own module: read the
notebooks, repair and scan them (:mod:`~autograder.pipeline.submission_files`), run nbgrader's
autograde in the student's kernel and keep the autograded copies for formgrader
(:mod:`~autograder.pipeline.kernel_run`), re-run the graded tests cleanly, award the points and
say why (:mod:`~autograder.pipeline.verdict`). Nothing the submission does makes it raise.
"""

import time

import nbformat

from autograder.pipeline import gradebook
from autograder.pipeline.grade_job import GradeJob
from autograder.pipeline.kernel_run import keep_autograded, run_in_kernel
from autograder.pipeline.results import Status, SubmissionResult, TestResult, folder_digest, timed
from autograder.pipeline.submission_files import expected_notebooks, read_notebooks, repair_and_scan
from autograder.pipeline.verdict import award, rerun_cleanly, settle_status


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
            folder = job.course.source_folder(job.assignment)
            sources = {name: nbformat.read(folder / f"{name}.ipynb", as_version=4) for name in notebooks}
            repair_and_scan(job, notebooks, sources, result)
        kernel = run_in_kernel(job, notebooks, sources, result.phases)
        with timed(result.phases, "keep autograded"):
            keep_autograded(kernel.autograded, job)
        clean = rerun_cleanly(job, notebooks, sources, kernel, result.phases)
        award(job, result, kernel, clean)
        settle_status(job, result, kernel, problems + kernel.problems)
    result.seconds = time.monotonic() - start
    return result
