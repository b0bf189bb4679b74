"""A flagged submission's feedback waits for the instructor's release, a missing one gets none; the export says
where each one stands.

The results are written directly (no grading): feedback then shows the summary of scores only.
"""

from pathlib import Path

import pytest

from autograder.cli import main
from autograder.course.course import Course
from autograder.pipeline.commands.export import export_frame
from autograder.pipeline.storage.results import Status, SubmissionResult, save_result
from autograder.pipeline.storage.results import TestResult as CellResult  # (a Test* name would be collected by pytest)
from tests.grader.hostile_class import ASSIGNMENT
from tests.support.course import ThrowawayCourse

FLAG = f"{ASSIGNMENT}: sdpa, line 3: patches torch.allclose"


def graded(course: Course, student: str, status: Status, digest: str) -> None:
    flags = [FLAG] if status == Status.FLAGGED else []
    reason = "1 finding(s) of the tamper check" if flags else ""
    tests = [CellResult(ASSIGNMENT, "sdpa_values", 2.0, score=2.0)]
    save_result(course, SubmissionResult(ASSIGNMENT, student, status, reason, digest, tests=tests, flags=flags))


@pytest.fixture
def course(throwaway_course: ThrowawayCourse) -> Course:
    """ann graded, bob and cy flagged."""
    course = throwaway_course(ASSIGNMENT)
    graded(course, "ann", Status.GRADED, "a1")
    graded(course, "bob", Status.FLAGGED, "b1")
    graded(course, "cy", Status.FLAGGED, "c1")
    return course


def page(course: Course, student: str) -> Path:
    return course.grading.feedback(student, ASSIGNMENT) / f"{ASSIGNMENT}.html"


def feedback(course: Course, *options: str) -> int:
    return main(["--root", str(course.root), "feedback", *options])


def column(course: Course) -> dict[str, str]:
    return export_frame(course).set_index("student")["feedback"].to_dict()


def test_flagged_feedback_is_held_listed_and_marked_in_the_export(
    course: Course, capsys: pytest.CaptureFixture[str]
) -> None:
    assert column(course) == {"ann": "none", "bob": "held (flagged)", "cy": "held (flagged)"}
    page(course, "bob").parent.mkdir(parents=True)
    page(course, "bob").write_text("feedback from before bob was flagged")
    assert feedback(course) == 0
    out = capsys.readouterr().out
    assert page(course, "ann").exists() and not page(course, "bob").exists() and not page(course, "cy").exists()
    assert f"held bob/{ASSIGNMENT}: flagged (1 finding(s) of the tamper check)" in out and FLAG in out
    assert f"--release-flagged bob/{ASSIGNMENT}" in out and "1 feedback files written, 2 submissions held" in out
    assert column(course) == {"ann": "written", "bob": "held (flagged)", "cy": "held (flagged)"}


def test_a_release_is_kept_for_later_runs_until_the_submission_changes(course: Course) -> None:
    assert feedback(course, "--release-flagged", f"bob/{ASSIGNMENT}") == 0
    assert page(course, "bob").exists() and not page(course, "cy").exists()
    assert column(course) == {"ann": "written", "bob": "released", "cy": "held (flagged)"}
    page(course, "bob").unlink()
    assert feedback(course, "--student", "bob") == 0  # a later run, no option: still released
    assert page(course, "bob").exists()
    graded(course, "bob", Status.FLAGGED, "b2")  # handed in again, graded again, flagged again
    assert feedback(course, "--student", "bob") == 0
    assert not page(course, "bob").exists() and column(course)["bob"] == "held (flagged)"


def test_release_by_student_all_at_once_and_unknown_names(course: Course, capsys: pytest.CaptureFixture[str]) -> None:
    assert feedback(course, "--student", "cy", "--release-flagged", "cy", "ann", "dan/01_attention") == 1
    assert "--release-flagged ann: no flagged submission" in capsys.readouterr().err  # ann is not flagged
    assert page(course, "cy").exists() and column(course)["bob"] == "held (flagged)"
    assert feedback(course, "--release-all-flagged") == 0
    assert page(course, "bob").exists() and column(course) == {"ann": "written", "bob": "released", "cy": "released"}


def test_a_missing_notebook_gets_no_page_and_the_export_says_missing(
    course: Course, capsys: pytest.CaptureFixture[str]
) -> None:
    # As grade leaves a hand-in folder without the notebook: every test lost, status missing.
    tests = [CellResult(ASSIGNMENT, name, 2.0) for name in ("sdpa_values", "sdpa_mask")]
    save_result(course, SubmissionResult(ASSIGNMENT, "dan", Status.MISSING, f"{ASSIGNMENT}.ipynb not submitted",
                                         "d1", tests=tests))
    page(course, "dan").parent.mkdir(parents=True)
    page(course, "dan").write_text("a page of failed tests from an earlier run")
    assert feedback(course) == 0
    assert not page(course, "dan").exists() and page(course, "ann").exists()
    assert "1 feedback files written, 2 submissions held" in capsys.readouterr().out
    row = export_frame(course).set_index("student").loc["dan"]
    assert (row["status"], row["feedback"]) == ("missing", "missing")
    assert row[f"{ASSIGNMENT}:sdpa_values why"] == row[f"{ASSIGNMENT}:sdpa_mask why"] == "not submitted"
