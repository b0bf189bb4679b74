"""The hostile class (see hostile_class.py), graded once per session by ``autograder.pipeline.grade``."""

import pytest

from autograder.course.settings import source_notebook
from autograder.pipeline.grade import grade
from tests.grader.hostile_class import ASSIGNMENT, CASES, LIMITS, GradedClass, make_course, submit


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory: pytest.TempPathFactory) -> GradedClass:
    root = tmp_path_factory.mktemp("course")
    make_course(root)
    for case in CASES:
        submit(root, case)
    good = root / "grading" / "submitted" / "good" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    good_bytes, solution_bytes = good.read_bytes(), source_notebook(ASSIGNMENT, root).read_bytes()
    results = grade(root=root, jobs=2, limits=LIMITS, progress=False)
    return GradedClass(root, {r.student: r for r in results}, good_bytes, solution_bytes)
