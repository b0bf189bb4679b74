"""What ``grade`` keeps per assignment, made once per test run and copied into each throw-away course.

The first time ``grade`` meets an assignment in a course it defines it (nbgrader's
generate_assignment: seconds) and times its reference answers (the whole notebook in a kernel),
and keeps both in the course's grading folder, keyed by a digest of the source notebooks
(:func:`autograder.pipeline.storage.gradebook.template_path`, :mod:`autograder.pipeline.job.cell_limits`).
Every throw-away course paid both again (tens of seconds for 04 and 07 on the suite's loaded
cores, see docs/measurements.md). Here one seed course per assignment
pays once per run, on whichever worker asks first (the others wait on its lock), by grading one
untouched hand-in with the real ``grade``; each new course then starts with copies of the
template and the times, as a course graded before does. The digests still hold: the notebooks are copied unchanged.
"""

import os
import shutil
import tempfile
from pathlib import Path

from filelock import FileLock

from autograder.course.course import Course
from autograder.launch.limits import Limits
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.reference_times import load_times, save_times, sources_digest
from tests.support.grading_pool import grade_on_kept_pool
from tests.support.harness import SHARED_FOLDER_ENV

SEED_STUDENT = "seed-untouched"
ONE_THREAD = Limits(threads=1)  # the course's limits, one math-library thread per kernel


def seed_course(assignment: str) -> Course:
    """The run's seed course of ``assignment``, graded once (an untouched hand-in) so its grading folder holds both."""
    folder = Path(os.environ.get(SHARED_FOLDER_ENV) or tempfile.gettempdir()) / "grading-seeds" / assignment
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{folder}.lock"):
        ready = folder / "ready"
        if not ready.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a half-made seed of an interrupted worker
            course = Course.default().copy_to(folder / "course", [assignment])
            handed_in = course.grading.submitted(SEED_STUDENT, assignment)
            handed_in.mkdir(parents=True)
            shutil.copy(course.release_notebook(assignment), handed_in / f"{assignment}.ipynb")
            # One math-library thread per kernel, as every course of the suite grades (two jobs on two cores):
            # on two threads the reference ran far slower on the loaded cores, and every limit grew. One job,
            # though: a second would start a second set of zygotes (docs/measurements.md) for the one hand-in.
            grade_on_kept_pool(course, jobs=1, limits=ONE_THREAD, progress=False)
            ready.touch()
    return Course(folder / "course", Course.default().grading_directory)


def seed(course: Course, assignments: list[str]) -> None:
    """Give ``course`` each assignment's template gradebook and reference times, as if graded before."""
    for assignment in assignments:
        seeded = seed_course(assignment)
        template = gradebook.template_path(course, assignment)
        template.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(gradebook.template_path(seeded, assignment), template)
        digest = sources_digest(course.source_folder(assignment))
        times = load_times(seeded.grading, assignment, digest)
        if not times:
            raise RuntimeError(f"{assignment}: the seed course kept no reference times (did its reference run fail?)")
        save_times(course.grading, assignment, digest, times)


def reference_seconds(assignment: str) -> float:
    """The seconds the reference answers' cells took, top to bottom, when the seed course's ``grade`` timed them."""
    seeded = seed_course(assignment)
    times = load_times(seeded.grading, assignment, sources_digest(seeded.source_folder(assignment)))
    if not times:  # no times is no evidence of speed: never 0 s
        raise RuntimeError(f"{assignment}: the seed course kept no reference times (did its reference run fail?)")
    return sum(sum(cells.values()) for cells in times.values())
