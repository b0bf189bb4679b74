"""``python -m autograder similarity``: each handed-in notebook compared, the results kept and the page written."""

import logging
import multiprocessing
from pathlib import Path

from autograder.course.course import Course
from autograder.similarity import compare, page
from autograder.similarity.answers import release_code
from autograder.similarity.fingerprints import boilerplate_hashes
from autograder.similarity.scores import MIN_STUDENTS

log = logging.getLogger(__name__)


def section(course: Course, assignment: str, jobs: int) -> tuple[compare.AssignmentSimilarity, list]:
    """One notebook compared, and its section of the page."""
    result, work = compare.compare_assignment(course, assignment, jobs)
    return result, page.assignment_section(result, work, boilerplate_hashes(release_code(work.release)))


def run(course: Course, assignments: list[str] | None, jobs: int, output: Path) -> int:
    handed_in = compare.handed_in(course, assignments)
    if jobs > 1 and len(handed_in) > 1 and "fork" in multiprocessing.get_all_start_methods():
        # One notebook per process: reading, fingerprints, scores and page all run side by side.
        with multiprocessing.get_context("fork").Pool(min(jobs, len(handed_in))) as pool:
            done = pool.starmap(section, [(course, a, 1) for a in handed_in])
    else:
        done = [section(course, a, jobs) for a in handed_in]
    for result, _ in done:
        small = f" (fewer than {MIN_STUDENTS} students answered: too few to rank)" if result.too_small else ""
        log.info(f"{result.assignment:24s} {len(result.students):4d} submissions, {len(result.listed()):4d} pairs "
                 f"listed, {len(result.reference_copies):4d} answers identical to the reference{small}")
    log.info(f"results -> {compare.save(course, [result for result, _ in done])}")
    log.info(f"page    -> {page.write_page([part for _, part in done], output)}")
    return 0
