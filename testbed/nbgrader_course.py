"""A throw-away nbgrader course (the ``throwaway_course`` fixture's), graded with nbgrader's own API."""

import time
from dataclasses import dataclass, field

import nbformat
from nbformat import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI

from autograder.course.course import Course
from autograder.course.notebooks import fill_answers
from autograder.course.paths import sqlite_url
from testbed.notebooks import read


@dataclass
class CellScore:
    auto_score: float | None
    max_score: float


@dataclass
class GradedRun:
    """Per student: the score of every autograded test cell, and the seconds autograde took."""

    course: Course
    scores: dict[str, dict[str, CellScore]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def code_score(self, student: str) -> tuple[float, float]:
        cells = self.scores[student].values()
        return sum(c.auto_score or 0.0 for c in cells), sum(c.max_score for c in cells)

    def failed_cells(self, student: str) -> set[str]:
        return {name for name, c in self.scores[student].items() if (c.auto_score or 0.0) < c.max_score}


def generate(course: Course, assignment: str) -> NbGraderAPI:
    """Generate the assignment's release in ``course`` from its source there (fills the gradebook)."""
    api = NbGraderAPI(config=course.config())
    result = api.generate_assignment(assignment)
    if not result["success"]:
        raise RuntimeError(f"generate_assignment failed:\n{result.get('error')}\n{result.get('log')}")
    return api


def submit(course: Course, assignment: str, student: str, notebook: NotebookNode) -> None:
    folder = course.grading.submitted(student, assignment)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / f"{assignment}.ipynb")


def autograde(api: NbGraderAPI, course: Course, assignment: str, student: str) -> dict[str, CellScore]:
    result = api.autograde(assignment, student)
    if not result["success"]:
        raise RuntimeError(f"autograde of {student} failed:\n{result.get('error')}\n{result.get('log')}")
    with Gradebook(sqlite_url(course.grading.gradebook)) as gradebook:
        notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        return {
            grade.name: CellScore(grade.auto_score, grade.max_score)
            for grade in notebook.grades
            if grade.cell_type == "code"
        }


def grade_release_submissions(
    assignment: str, course: Course, extra: dict[str, dict[str, str]] | None = None
) -> GradedRun:
    """Autograde the untouched release and any ``extra`` student -> answers.

    ``course`` holds the assignment's source only (a ``throwaway_course(..., release=False)``).
    """
    api = generate(course, assignment)
    release = read(course.release_notebook(assignment))
    students = {"untouched": {}, **(extra or {})}
    run = GradedRun(course)
    for student, answers in students.items():
        submit(course, assignment, student, fill_answers(release, answers))
        start = time.perf_counter()
        run.scores[student] = autograde(api, course, assignment, student)
        run.seconds[student] = time.perf_counter() - start
    return run
