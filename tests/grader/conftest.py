"""The hostile class (see hostile_class.py), graded once per session by ``autograder.pipeline.commands.grade``."""

import pytest

from tests.grader.hostile_class import ASSIGNMENT, CASES, LIMITS, GradedClass, submit
from tests.support.course import ThrowawayCourse
from tests.support.grading_pool import grade_on_kept_pool


@pytest.fixture(scope="session")
def graded_class(throwaway_course: ThrowawayCourse) -> GradedClass:
    course = throwaway_course(ASSIGNMENT, seeded=True)
    for case in CASES:
        submit(course, case)
    good = course.grading.submitted("good", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    good_bytes, solution_bytes = good.read_bytes(), course.source_notebook(ASSIGNMENT).read_bytes()
    results = grade_on_kept_pool(course, jobs=2, limits=LIMITS, progress=False)
    return GradedClass(course, {r.student: r for r in results}, good_bytes, solution_bytes)
