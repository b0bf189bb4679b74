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
from autograder.course.extensions import EXTENSIONS_FILE, due_for, extension_of, read_extensions
from autograder.course.paths import TIMESTAMP_FILE
from autograder.pipeline.commands.export import export_frame
from autograder.pipeline.commands.feedback import keep_submission_marks
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import Status, SubmissionResult, save_result
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
    (course.root / EXTENSIONS_FILE).write_text(f"student,assignment,due\nextended,{ASSIGNMENT},+3h\n")
    course.grading.path.mkdir(exist_ok=True)
    shutil.copyfile(gradebook.template_gradebook(course, ASSIGNMENT), course.grading.gradebook)
    gradebook.ensure_defined(course, ASSIGNMENT)
    late = DUE + timedelta(hours=2, minutes=5)
    times = {"early": DUE - timedelta(minutes=3), "late": late, "extended": late, "lms": None}
    due_dates = course.due_dates()
    extensions = read_extensions(course.root, course.assignments(), due_dates)
    with Gradebook(gradebook.sqlite_url(course.grading.gradebook)) as gb:
        assert gb.find_assignment(ASSIGNMENT).duedate == DUE.replace(tzinfo=None)
        for student, when in times.items():
            submit(course, student, when)
            result = SubmissionResult(ASSIGNMENT, student, Status.GRADED)
            extension = extension_of(student, ASSIGNMENT, due_dates, extensions)  # as grade merges it
            gradebook.merge(gb, result, submitted_at(course.grading.submitted(student, ASSIGNMENT)), extension)
            save_result(course, result)
        nbgrader_late = {s: gb.find_submission(ASSIGNMENT, s).total_seconds_late for s in times}

    rows = export_frame(course).set_index("student")
    assert rows.loc["early", "late by"] == "on time" and rows.loc["early", "seconds late"] == 0
    assert rows.loc["late", "late by"] == "2 h 5 min" and rows.loc["late", "seconds late"] == 7500
    assert rows.loc["lms", "late by"] == "" and rows.loc["lms", "submitted"] == ""  # an LMS upload has no time
    assert rows.loc["late", "due"] == "2026-12-07T15:59:00+00:00"
    # The same time, 3 h of extension: on time, and the export's due is the student's own.
    assert rows.loc["extended", "late by"] == "on time" and rows.loc["extended", "seconds late"] == 0
    assert rows.loc["extended", "due"] == "2026-12-07T18:59:00+00:00"
    # nbgrader's own view (formgrader's) agrees, the extension included.
    assert nbgrader_late == {"early": 0, "late": 7500, "extended": 0, "lms": 0}


def test_feedback_keeps_what_release_feedback_matches_a_submission_by(tmp_path: Path) -> None:
    course = Course(tmp_path)
    submit(course, "ada", DUE)
    (course.grading.submitted("ada", ASSIGNMENT) / "submission_secret.txt").write_text("s3cret")
    folder = course.grading.feedback("ada", ASSIGNMENT)
    folder.mkdir(parents=True)
    keep_submission_marks(course, SubmissionResult(ASSIGNMENT, "ada", Status.GRADED), folder)
    assert (folder / TIMESTAMP_FILE).read_text() == DUE.strftime(NBGRADER_TIME)
    assert (folder / "submission_secret.txt").read_text() == "s3cret"


def test_an_extension_gives_one_student_their_own_due_date(tmp_path: Path) -> None:
    (tmp_path / EXTENSIONS_FILE).write_text(
        "student,assignment,due\n"
        f"ada,{ASSIGNMENT},2026-12-09T23:59:00+08:00\n"
        f"bob,{ASSIGNMENT},+48h\n"
        f"cy,{ASSIGNMENT},+1.5d\n"
    )
    extensions = read_extensions(tmp_path, [ASSIGNMENT], {ASSIGNMENT: DUE})
    assert due_for("ada", ASSIGNMENT, {ASSIGNMENT: DUE}, extensions) == DUE + timedelta(days=2)
    assert due_for("bob", ASSIGNMENT, {ASSIGNMENT: DUE}, extensions) == DUE + timedelta(hours=48)
    assert due_for("cy", ASSIGNMENT, {ASSIGNMENT: DUE}, extensions) == DUE + timedelta(hours=36)
    assert due_for("dai", ASSIGNMENT, {ASSIGNMENT: DUE}, extensions) == DUE  # no row: the assignment's
    assert due_for("dai", ASSIGNMENT, {}, extensions) is None  # no deadline at all
    assert read_extensions(tmp_path / "elsewhere", [ASSIGNMENT], {}) == {}  # no file: no extension


@pytest.mark.parametrize(
    ("row", "due_dates", "error"),
    [
        (f"ada,{ASSIGNMENT},+2d", {}, "extends a due date that due_dates.csv does not set"),
        ("ada,01_attnetion,+2d", {ASSIGNMENT: DUE}, "not a notebook of this course"),
        (f"ada,{ASSIGNMENT},next week", {ASSIGNMENT: DUE}, "not an ISO 8601 date"),
        (f"ada,{ASSIGNMENT},2026-12-09 23:59", {ASSIGNMENT: DUE}, "no UTC offset"),
        (f",{ASSIGNMENT},+2d", {ASSIGNMENT: DUE}, "no student"),
        (f"ada,{ASSIGNMENT},+2d\nada,{ASSIGNMENT},+3d", {ASSIGNMENT: DUE}, "a second extension for ada"),
    ],
)
def test_a_bad_extension_is_an_error_that_says_where(
    tmp_path: Path, row: str, due_dates: dict[str, datetime], error: str
) -> None:
    (tmp_path / EXTENSIONS_FILE).write_text(f"student,assignment,due\n{row}\n")
    with pytest.raises(DueDateError, match=rf"extensions.csv:\d: .*{error}"):
        read_extensions(tmp_path, [ASSIGNMENT], due_dates)
