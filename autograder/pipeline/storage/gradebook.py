"""Everything the grader reads from or writes to nbgrader gradebooks, through nbgrader's Gradebook API."""

import json
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps import NbGraderAPI
from sqlalchemy.exc import SAWarning

from autograder.course.course import Course
from autograder.course.paths import sqlite_url
from autograder.isolated.alembic_head import use_in_process_alembic_head
from autograder.pipeline.storage.reference_times import sources_digest
from autograder.pipeline.storage.results import Status, SubmissionResult

use_in_process_alembic_head()  # defining an assignment creates gradebooks; see alembic_head

DEFINED_FILE = "defined_assignments.json"  # which version of each assignment the real gradebook holds


@dataclass(frozen=True)
class GradeCellInfo:
    notebook: str
    grade_id: str
    max_score: float
    autograded: bool  # a code test cell; False for a written answer graded by hand


def define_assignment(course: Course, assignment: str, db_path: Path) -> None:
    """Write ``assignment``'s definition (notebooks, grade and source cells) into ``db_path``.

    Runs nbgrader's generate_assignment in a throw-away course folder, so the repository's
    committed release notebooks are never rewritten by grading.
    """
    with tempfile.TemporaryDirectory(prefix="define-") as scratch:
        config = course.copy_to(Path(scratch), [assignment], release=False).config()
        config.CourseDirectory.db_url = sqlite_url(db_path)
        result = NbGraderAPI(config=config).generate_assignment(assignment, force=True, create=True)
        if not result["success"]:
            raise RuntimeError(f"nbgrader could not define {assignment}:\n{result['log']}\n{result.get('error', '')}")


def template_path(course: Course, assignment: str) -> Path:
    """Where ``assignment``'s template gradebook is kept for the current version of its notebooks."""
    digest = sources_digest(course.source_folder(assignment))
    return course.grading.file(f"templates/{assignment}-{digest[:16]}.db")


def template_gradebook(course: Course, assignment: str) -> Path:
    """A gradebook holding only ``assignment``'s definition, kept in the grading folder until its notebooks change.

    Defining an assignment runs nbgrader's generate_assignment (seconds); every ``grade`` command
    and every job reuses the kept copy instead.
    """
    path = template_path(course, assignment)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob(f"{assignment}-*.db"):
            stale.unlink()
        partial = path.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        define_assignment(course, assignment, partial)
        partial.replace(path)
    return path


def ensure_defined(course: Course, assignment: str) -> None:
    """Define ``assignment`` in the real gradebook, unless it already holds this version of its notebooks."""
    grading = course.grading
    record = grading.file(DEFINED_FILE)
    try:
        defined = json.loads(record.read_text())
    except (OSError, ValueError):
        defined = {}
    digest = sources_digest(course.source_folder(assignment))
    if defined.get(assignment) != digest or not has_assignment(grading.gradebook, assignment):
        if grading.gradebook.exists():
            define_assignment(course, assignment, grading.gradebook)
        else:  # a new gradebook would hold just this definition: the template's copy, without seconds of nbgrader
            shutil.copy(template_gradebook(course, assignment), grading.gradebook)
        defined[assignment] = digest
        record.write_text(json.dumps(defined, indent=1))
    with Gradebook(sqlite_url(grading.gradebook)) as gb:  # nbgrader's due date, from due_dates.csv (naive UTC)
        gb.update_or_create_assignment(assignment, duedate=naive_utc(course.due_dates().get(assignment)))


def naive_utc(when: datetime | None) -> datetime | None:
    return when.astimezone(UTC).replace(tzinfo=None) if when else None


def has_assignment(db_path: Path, assignment: str) -> bool:
    if not Path(db_path).exists():
        return False
    with Gradebook(sqlite_url(db_path)) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            return False
    return True


def grade_cells(db_path: Path, assignment: str) -> list[GradeCellInfo]:
    with Gradebook(sqlite_url(db_path)) as gb:
        return [
            GradeCellInfo(notebook.name, cell.name, float(cell.max_score), cell.cell_type == "code")
            for notebook in gb.find_assignment(assignment).notebooks
            for cell in notebook.grade_cells
        ]


def kernel_scores(db_path: Path, assignment: str, student: str) -> dict[tuple[str, str], float] | None:
    """``{(notebook, grade_id): auto_score}`` from a course copy's gradebook; None if nothing was saved."""
    try:
        with Gradebook(sqlite_url(db_path)) as gb:
            submission = gb.find_submission(assignment, student)
            return {
                (notebook.name, grade.name): float(grade.auto_score or 0.0)
                for notebook in submission.notebooks
                for grade in notebook.grades
            }
    except Exception:  # missing entry, or a corrupt copy left by a hostile run
        return None


def merge(
    gb: Gradebook, result: SubmissionResult, submitted: datetime | None = None, extension: timedelta | None = None
) -> None:
    """Write a result's scores into the open real gradebook ``gb``; manual scores already given are kept.

    ``submitted``, the submission's time (its ``timestamp.txt``), and ``extension``, the student's
    own extension past the assignment's due date (``extensions.csv``), let nbgrader (and formgrader)
    tell a late one as the export does.
    """
    if result.status == Status.MISSING:
        return
    gb.update_or_create_student(result.student)
    try:
        submission = gb.find_submission(result.assignment, result.student)
    except MissingEntry:
        with warnings.catch_warnings():  # nbgrader's add_submission trips SQLAlchemy's autoflush notes
            warnings.simplefilter("ignore", SAWarning)
            submission = gb.add_submission(result.assignment, result.student)
    submission.timestamp = naive_utc(submitted)
    submission.extension = extension
    for test in result.tests:
        grade = gb.find_grade(test.grade_id, test.notebook, result.assignment, result.student)
        grade.auto_score = test.score
        grade.needs_manual_grade = False
    autograded = {(test.notebook, test.grade_id) for test in result.tests}
    for notebook in submission.notebooks:
        notebook.flagged = result.status != Status.GRADED
        for grade in notebook.grades:
            if (notebook.name, grade.name) not in autograded and grade.manual_score is None:
                grade.needs_manual_grade = True
    gb.db.commit()


def students(db_path: Path) -> list[str]:
    if not Path(db_path).exists():
        return []
    with Gradebook(sqlite_url(db_path)) as gb:
        return [student.id for student in gb.students]
