"""A throw-away nbgrader course in a temporary folder, graded with nbgrader's own API."""

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.apps import NbGraderAPI

from autograder.course import settings
from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.paths import GradingFolder
from tests.support.notebooks import read


@dataclass
class CellScore:
    auto_score: float | None
    max_score: float


@dataclass
class GradedRun:
    """Per student: the score of every autograded test cell, and the seconds autograde took."""

    root: Path
    scores: dict[str, dict[str, CellScore]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def code_score(self, student: str) -> tuple[float, float]:
        cells = self.scores[student].values()
        return sum(c.auto_score or 0.0 for c in cells), sum(c.max_score for c in cells)

    def failed_cells(self, student: str) -> set[str]:
        return {name for name, c in self.scores[student].items() if (c.auto_score or 0.0) < c.max_score}


def make_course(assignment: str, root: Path) -> NbGraderAPI:
    """Copy the assignment's source into ``root`` and generate its release there (fills the gradebook)."""
    shutil.copytree(settings.source_notebook(assignment).parent, root / settings.SOURCE_DIRECTORY / assignment)
    api = NbGraderAPI(config=settings.course_config(root))
    result = api.generate_assignment(assignment)
    if not result["success"]:
        raise RuntimeError(f"generate_assignment failed:\n{result.get('error')}\n{result.get('log')}")
    return api


def submit(root: Path, assignment: str, student: str, notebook: NotebookNode) -> None:
    folder = GradingFolder(root).submitted(student, assignment)
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / f"{assignment}.ipynb")


def autograde(api: NbGraderAPI, root: Path, assignment: str, student: str) -> dict[str, CellScore]:
    result = api.autograde(assignment, student)
    if not result["success"]:
        raise RuntimeError(f"autograde of {student} failed:\n{result.get('error')}\n{result.get('log')}")
    db_url = f"sqlite:///{GradingFolder(root).gradebook}"
    with Gradebook(db_url) as gradebook:
        notebook = gradebook.find_submission_notebook(assignment, assignment, student)
        return {
            grade.name: CellScore(grade.auto_score, grade.max_score)
            for grade in notebook.grades
            if grade.cell_type == "code"
        }


def grade_reference_submissions(
    assignment: str, root: Path, extra: dict[str, dict[str, str]] | None = None
) -> GradedRun:
    """Autograde the reference answers, the untouched release, and any ``extra`` student -> answers."""
    api = make_course(assignment, root)
    release = read(root / settings.RELEASE_DIRECTORY / assignment / f"{assignment}.ipynb")
    reference = reference_answers(read(settings.source_notebook(assignment)))
    students = {"reference": reference, "untouched": {}, **(extra or {})}
    run = GradedRun(root)
    for student, answers in students.items():
        submit(root, assignment, student, fill_answers(release, answers))
        start = time.perf_counter()
        run.scores[student] = autograde(api, root, assignment, student)
        run.seconds[student] = time.perf_counter() - start
    return run
