"""Due dates from one file (``due_dates.csv``): into the gradebook, late work marked in the export.

No kernel runs: results are written as ``grade`` writes them, each with the ``timestamp.txt``
that ``nbgrader submit`` leaves in a submission (the hub's exchange); nbgrader's own
``total_seconds_late`` must agree with the export's column.
"""

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.course.course import Course
from autograder.course.deadlines import DUE_DATES_FILE, DueDateError, late_text, read_due_dates, submitted_at
from autograder.course.paths import TIMESTAMP_FILE
from autograder.pipeline import gradebook
from autograder.pipeline.export import export_frame
from autograder.pipeline.feedback import keep_submission_marks
from autograder.pipeline.results import Status, SubmissionResult, save_result
from tests.grader.hostile_class import ASSIGNMENT
from tests.support.course import ThrowawayCourse

DUE = datetime(2026, 12, 7, 15, 59, tzinfo=UTC)  # 23:59 in UTC+8, as the file writes it
NBGRADER_TIME = "%Y-%m-%d %H:%M:%S.%f %Z"  # nbgrader's Exchange.timestamp_format


def write_due_dates(root: Path, rows: str) -> None:
    (root / DUE_DATES_FILE).write_text("assignment,due\n" + rows)


def submit(course: Course, student: str, when: datetime | None) -> None:
    """A submission folder as nbgrader's collect leaves it (with its time, unless ``when`` is None)."""
    folder = course.grading.submitted(student, ASSIGNMENT)
    folder.mkdir(parents=True)
    if when is not None:
        (folder / TIMESTAMP_FILE).write_text(when.strftime(NBGRADER_TIME))


def test_the_repository_s_due_dates_file_names_every_notebook_once() -> None:
    course = Course.default()
    names = [line.split(",")[0] for line in (course.root / DUE_DATES_FILE).read_text().splitlines()[1:]]
    assert sorted(names) == course.assignments()
    course.due_dates()  # every date in it parses


def test_a_bad_due_date_is_an_error_that_says_where(tmp_path: Path) -> None:
    write_due_dates(tmp_path, "01_attention,2026-12-07 23:59\n")
    with pytest.raises(DueDateError, match=r"due_dates.csv:2: .* no UTC offset"):
        read_due_dates(tmp_path, ["01_attention"])
    write_due_dates(tmp_path, "01_attnetion,2026-12-07T23:59:00+08:00\n")
    with pytest.raises(DueDateError, match="not a notebook of this course"):
        read_due_dates(tmp_path, ["01_attention"])
    write_due_dates(tmp_path, "01_attention,next friday\n")
    with pytest.raises(DueDateError, match="not an ISO 8601 date"):
        read_due_dates(tmp_path, ["01_attention"])


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, ""), (0.0, "on time"), (0.4, "1 s"), (59, "59 s"), (3600, "1 h"), (7500, "2 h 5 min"), (97205, "1 d 3 h")],
)
def test_late_text(seconds: float | None, text: str) -> None:
    assert late_text(seconds) == text


@pytest.mark.slow  # generate_assignment defines notebook 01 (seconds)
def test_late_work_is_marked_in_the_gradebook_and_the_export(throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course(ASSIGNMENT)
    write_due_dates(course.root, f"{ASSIGNMENT},2026-12-07T23:59:00+08:00\n")
    course.grading.path.mkdir(exist_ok=True)
    shutil.copyfile(gradebook.template_gradebook(course, ASSIGNMENT), course.grading.gradebook)
    gradebook.ensure_defined(course, ASSIGNMENT)
    times = {"early": DUE - timedelta(minutes=3), "late": DUE + timedelta(hours=2, minutes=5), "lms": None}
    with Gradebook(gradebook.sqlite_url(course.grading.gradebook)) as gb:
        assert gb.find_assignment(ASSIGNMENT).duedate == DUE.replace(tzinfo=None)
        for student, when in times.items():
            submit(course, student, when)
            result = SubmissionResult(ASSIGNMENT, student, Status.GRADED)
            gradebook.merge(gb, result, submitted_at(course.grading.submitted(student, ASSIGNMENT)))
            save_result(course, result)
        nbgrader_late = {s: gb.find_submission(ASSIGNMENT, s).total_seconds_late for s in times}

    rows = export_frame(course).set_index("student")
    assert rows.loc["early", "late by"] == "on time" and rows.loc["early", "seconds late"] == 0
    assert rows.loc["late", "late by"] == "2 h 5 min" and rows.loc["late", "seconds late"] == 7500
    assert rows.loc["lms", "late by"] == "" and rows.loc["lms", "submitted"] == ""  # an LMS upload has no time
    assert rows.loc["late", "due"] == "2026-12-07T15:59:00+00:00"
    assert nbgrader_late == {"early": 0, "late": 7500, "lms": 0}  # nbgrader's own view agrees


def test_feedback_keeps_what_release_feedback_matches_a_submission_by(tmp_path: Path) -> None:
    course = Course(tmp_path)
    submit(course, "ada", DUE)
    (course.grading.submitted("ada", ASSIGNMENT) / "submission_secret.txt").write_text("s3cret")
    folder = course.grading.feedback("ada", ASSIGNMENT)
    folder.mkdir(parents=True)
    keep_submission_marks(course, SubmissionResult(ASSIGNMENT, "ada", Status.GRADED), folder)
    assert (folder / TIMESTAMP_FILE).read_text() == DUE.strftime(NBGRADER_TIME)
    assert (folder / "submission_secret.txt").read_text() == "s3cret"
