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
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook
from tqdm import tqdm

from autograder.course.course import Course
from autograder.course.deadlines import submitted_at
from autograder.course.extensions import extension_of, read_extensions
from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.paths import sqlite_url
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


def submitted_students(course: Course) -> list[str]:
    folder = course.grading.submitted()
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def ungraded_students(course: Course, assignments: list[str], everyone: list[str], force: bool,
                      results: list[SubmissionResult]) -> dict[str, list[str]]:
    """``{assignment: students to grade}``: those whose files changed since their last grading (all with ``force``).

    A student with nothing submitted gets a MISSING result, appended to ``results`` and saved.
    """
    to_grade: dict[str, list[str]] = {}
    for assignment in assignments:
        to_grade[assignment] = []
        for student in everyone:
            folder = course.grading.submitted(student, assignment)
            previous = load_result(course, assignment, student)
            if not force and previous is not None and previous.digest == folder_digest(folder):
                continue
            if not folder.is_dir():
                results.append(SubmissionResult(assignment, student, Status.MISSING, "nothing submitted"))
                save_result(course, results[-1])
                continue
            to_grade[assignment].append(student)
    return to_grade


def grade(
    course: Course,
    *,
    assignments: list[str] | None = None,
    students: list[str] | None = None,
    jobs: int = 2,
    force: bool = False,
    limits: Limits | None = None,
    executor: Executor | None = None,
    clean_rerun: bool = True,
    sandbox: bool | None = None,
    progress: bool = True,
    reference_times: bool = True,
) -> list[SubmissionResult]:
    """Grade the submissions in the course's ``grading/submitted``; returns the results of this run.

    Already graded submissions whose files have not changed are skipped unless ``force``.
    ``sandbox=None`` uses bubblewrap when it is installed. With ``reference_times``, each cell's
    time limit follows the reference run (see :mod:`autograder.pipeline.job.cell_limits`); without,
    every cell gets ``limits.cell_timeout``.
    """
    limits = limits or Limits()
    if limits.threads is None:  # share the cores between the parallel jobs
        limits = dataclasses.replace(limits, threads=max(1, (os.cpu_count() or 1) // max(1, jobs)))
    sandbox = bwrap_available() if sandbox is None else sandbox
    grading = course.grading
    real_db = grading.gradebook
    real_db.parent.mkdir(parents=True, exist_ok=True)
    everyone = students or sorted(set(submitted_students(course)) | set(gradebook.students(real_db)))
    results: list[SubmissionResult] = []
    report_cleared(clear_left_behind())
    run = RunFolder()
    own_executor = executor is None
    executor = executor or ProcessPoolExecutor(max_workers=max(1, jobs), initializer=join_run,
                                               initargs=(os.getpid(), run.path))
    try:
        with tempfile.TemporaryDirectory(prefix="reference-", dir=run.path) as references_folder:
            to_grade = ungraded_students(course, assignments or course.assignments(), everyone, force, results)
            base_jobs = {a: GradeJob(course, a, REFERENCE_STUDENT, Path(references_folder) / a,
                                     gradebook.template_path(course, a), limits, clean_rerun, sandbox)
                         for a in to_grade}
            first = next((a for a, names in to_grade.items() if names), None)
            busy_workers = min(max(1, jobs), sum(len(names) for names in to_grade.values()))
            for _ in range(busy_workers if first else 0):  # their zygotes start while this process defines
                executor.submit(warm_up, base_jobs[first])  # a failure only leaves it to the worker's first job
            grading_jobs: list[GradeJob] = []
            references: dict[str, GradeJob] = {}
            for assignment, names in to_grade.items():
                template_db = gradebook.template_gradebook(course, assignment)
                gradebook.ensure_defined(course, assignment)
                cells = tuple(gradebook.grade_cells(template_db, assignment))
                job = dataclasses.replace(base_jobs[assignment], cells=cells)
                grading_jobs += [dataclasses.replace(job, student=name, submission=grading.submitted(name, assignment))
                                 for name in names]
                if names and reference_times:
                    write_reference_submission(course, assignment, job.submission)
                    references[assignment] = job
            cell_limits = reference_limits(references, course, executor)
            grading_jobs = [dataclasses.replace(j, cell_limits=cell_limits.get(j.assignment)) for j in grading_jobs]
            futures: dict[Future, GradeJob] = {executor.submit(grade_submission, job): job for job in grading_jobs}
            due_dates = course.due_dates()
            extensions = read_extensions(course.root, course.assignments(), due_dates)
            # One session on the real gradebook for the whole run: each merge commits on its own.
            with Gradebook(sqlite_url(real_db)) as real:
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
    finally:
        if own_executor:
            executor.shutdown()
        run.close()
    return results


def report_cleared(folders: list[Path]) -> None:
    if folders:
        log.warning(f"removed {len(folders)} temporary folder(s) that a grade run left when it was stopped before its "
                    f"end (killed, or the machine went down): {', '.join(map(str, folders))}")
