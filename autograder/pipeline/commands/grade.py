"""``grade``: autograde every submission of the course, in parallel, resumably, then merge.

Each submission is one job (:func:`~autograder.pipeline.job.runner.grade_submission`)
that returns a picklable result; jobs run on any ``concurrent.futures`` executor, whose
workers keep their zygotes from job to job, and only the calling process writes to the real
gradebook, one result at a time. Before the students' jobs, each assignment's reference
answers are graded once (and the times kept until its notebooks change), to give every cell
a time limit that follows the reference (:mod:`autograder.pipeline.job.cell_limits`).
"""

import dataclasses
import logging
import os
import tempfile
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from tqdm import tqdm

from autograder.course.course import Course
from autograder.course.deadlines import submitted_at
from autograder.course.extensions import extension_of, read_extensions
from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.paths import sqlite_url
from autograder.course.settings import GradeSettings
from autograder.launch.limits import Limits
from autograder.launch.run_folder import RunFolder, clear_left_behind, join_run
from autograder.launch.sandbox import bwrap_available
from autograder.pipeline.job.cell_limits import CellLimits
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.runner import grade_submission, time_reference, warm_up
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.reference_times import load_times, save_times, sources_digest
from autograder.pipeline.storage.results import Status, SubmissionResult, folder_digest, load_result, save_result, timed

REFERENCE_STUDENT = "reference-answers"
log = logging.getLogger(__name__)


def write_reference_submission(course: Course, assignment: str, folder: Path) -> None:
    """The release notebooks of ``assignment`` filled with the reference answers, in ``folder``."""
    folder.mkdir(parents=True)
    for path in course.source_folder(assignment).glob("*.ipynb"):
        release = nbformat.read(course.release_folder(assignment) / path.name, as_version=4)
        answers = reference_answers(nbformat.read(path, as_version=4))
        nbformat.write(fill_answers(release, answers), folder / path.name)


def reference_limits(jobs: dict[str, GradeJob], course: Course, executor: Executor) -> dict[str, CellLimits]:
    """Each assignment's cell limits, from its kept reference times or from timing the reference now.

    ``jobs`` are the reference jobs by assignment. An assignment whose reference run does not
    finish keeps the plain cell timeout for every cell, and ``grade`` says so.
    """
    times: dict[str, dict[str, dict[str, float]]] = {}
    pending: dict[Future, str] = {}
    for assignment, job in jobs.items():
        kept = load_times(course.grading, assignment, sources_digest(course.source_folder(assignment)))
        if kept is not None:
            times[assignment] = kept
        else:
            pending[executor.submit(time_reference, job)] = assignment
    for future in as_completed(pending):
        assignment = pending[future]
        try:
            times[assignment] = future.result()
        except Exception as error:  # without times, every cell gets the cell timeout
            log.warning(f"{assignment}: timing the reference answers failed ({error})")
            times[assignment] = {}
        if times[assignment]:
            save_times(course.grading, assignment, sources_digest(course.source_folder(assignment)), times[assignment])
        else:
            log.warning(f"{assignment}: the reference answers did not run through; every cell gets the cell timeout")
    rule = next(iter(jobs.values())).limits if jobs else Limits(cell_timeout=0)
    return {assignment: CellLimits.from_times(seconds, rule) for assignment, seconds in times.items()}


@dataclass(frozen=True)
class GradeOptions:
    """What a ``grade`` run grades, and how: the command's flags and the settings behind them."""

    assignments: list[str] | None = None  # None: every assignment of the course
    students: list[str] | None = None  # None: everyone who handed something in or is in the gradebook
    jobs: int = GradeSettings.jobs.default_value  # submissions graded in parallel
    force: bool = False  # grade again the submissions whose files have not changed since their last grading
    limits: Limits = Limits()  # threads None: the cores shared between the parallel jobs
    clean_rerun: bool = True  # False: the clean re-run only scores what the kernel run could not
    sandbox: bool | None = None  # None: bubblewrap where it is installed
    progress: bool = True
    reference_times: bool = True  # each cell's limit follows the reference run (cell_limits.py); False: cell_timeout


def ungraded_students(course: Course, options: GradeOptions) -> tuple[dict[str, list[str]], list[SubmissionResult]]:
    """``{assignment: students to grade}``: those whose files changed since their last grading (all with ``force``);
    and, saved, a MISSING result for each of the others who submitted nothing."""
    submitted = course.grading.submitted()
    handed_in = {path.name for path in submitted.iterdir() if path.is_dir()} if submitted.is_dir() else set()
    everyone = options.students or sorted(handed_in | set(gradebook.students(course.grading.gradebook)))
    to_grade: dict[str, list[str]] = {}
    missing: list[SubmissionResult] = []
    for assignment in options.assignments or course.assignments():
        to_grade[assignment] = []
        for student in everyone:
            folder = course.grading.submitted(student, assignment)
            previous = load_result(course, assignment, student)
            if not options.force and previous is not None and previous.digest == folder_digest(folder):
                continue
            if folder.is_dir():
                to_grade[assignment].append(student)
            else:
                missing.append(SubmissionResult(assignment, student, Status.MISSING, "nothing submitted"))
                save_result(course, missing[-1])
    return to_grade, missing


def grading_jobs(course: Course, options: GradeOptions, to_grade: dict[str, list[str]], references: Path,
                 executor: Executor) -> list[GradeJob]:
    """A job per student of ``to_grade``, with its assignment's cell limits (its reference answers in ``references``).

    Each worker that will have a job starts its zygotes first, in a task of its own, while this process defines
    the assignments; then the reference answers whose kept times are stale are timed.
    """
    limits = options.limits
    if limits.threads is None:  # share the cores between the parallel jobs
        limits = dataclasses.replace(limits, threads=max(1, (os.cpu_count() or 1) // max(1, options.jobs)))
    sandbox = bwrap_available() if options.sandbox is None else options.sandbox
    base = {a: GradeJob(course, a, REFERENCE_STUDENT, references / a, gradebook.template_path(course, a), limits,
                        options.clean_rerun, sandbox) for a in to_grade}
    first = next((a for a, names in to_grade.items() if names), None)
    busy_workers = min(max(1, options.jobs), sum(len(names) for names in to_grade.values()))
    for _ in range(busy_workers if first else 0):  # their zygotes start while this process defines
        executor.submit(warm_up, base[first])  # a failure only leaves it to the worker's first job
    jobs: list[GradeJob] = []
    reference_jobs: dict[str, GradeJob] = {}
    for assignment, names in to_grade.items():
        template_db = gradebook.template_gradebook(course, assignment)
        gradebook.ensure_defined(course, assignment)
        job = dataclasses.replace(base[assignment], cells=tuple(gradebook.grade_cells(template_db, assignment)))
        jobs += [dataclasses.replace(job, student=name, submission=course.grading.submitted(name, assignment))
                 for name in names]
        if names and options.reference_times:
            write_reference_submission(course, assignment, job.submission)
            reference_jobs[assignment] = job
    cell_limits = reference_limits(reference_jobs, course, executor)
    return [dataclasses.replace(job, cell_limits=cell_limits.get(job.assignment)) for job in jobs]


def merged_results(course: Course, futures: dict[Future, GradeJob], progress: bool) -> list[SubmissionResult]:
    """Each job's result as it comes (a grader's failure: CRASHED), merged into the real gradebook and saved."""
    due_dates = course.due_dates()
    extensions = read_extensions(course.root, course.assignments(), due_dates)
    results = []
    # One session on the real gradebook for the whole run: each merge commits on its own.
    with Gradebook(sqlite_url(course.grading.gradebook)) as real:
        for future in tqdm(as_completed(futures), total=len(futures), desc="grading", disable=not progress):
            job = futures[future]
            try:
                result = future.result()
            except Exception as error:  # a grader failure must not stop the others
                result = SubmissionResult(job.assignment, job.student, Status.CRASHED,
                                          f"grader error: {type(error).__name__}: {error}",
                                          digest=folder_digest(job.submission))
            with timed(result.phases, "merge"):
                extension = extension_of(job.student, job.assignment, due_dates, extensions)
                gradebook.merge(real, result, submitted_at(job.submission), extension)
            save_result(course, result)
            results.append(result)
    return results


def grade(course: Course, options: GradeOptions = GradeOptions(), executor: Executor | None = None
          ) -> list[SubmissionResult]:
    """Grade the submissions in the course's ``grading/submitted`` on ``executor`` (None: a process pool of
    ``options.jobs``); the results of this run."""
    course.grading.gradebook.parent.mkdir(parents=True, exist_ok=True)
    if cleared := clear_left_behind():
        log.warning(f"removed {len(cleared)} temporary folder(s) that a grade run left when it was stopped before its "
                    f"end (killed, or the machine went down): {', '.join(map(str, cleared))}")
    run = RunFolder()
    own_executor = executor is None
    executor = executor or ProcessPoolExecutor(max_workers=max(1, options.jobs), initializer=join_run,
                                               initargs=(os.getpid(), run.path))
    try:
        with tempfile.TemporaryDirectory(prefix="reference-", dir=run.path) as references:
            to_grade, missing = ungraded_students(course, options)
            jobs = grading_jobs(course, options, to_grade, Path(references), executor)
            return missing + merged_results(course, {executor.submit(grade_submission, j): j for j in jobs},
                                            options.progress)
    finally:
        if own_executor:
            executor.shutdown()
        run.close()
