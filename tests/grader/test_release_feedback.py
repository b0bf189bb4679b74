"""Each student's trouble stays theirs, from collect to release feedback (filesystem exchange, one account).

A hand-in or a feedback folder that lacks a file nbgrader expects, or has a folder where a file
belongs, costs its own student only: collect refuses what could not travel back as feedback, and
release feedback (formgrader's button: ``NbGraderAPI.release_feedback``; the command line) skips
a malformed feedback folder with its reason, releases every other student's pages, and never logs
a page's name in the exchange. Ownership and the hub's accounts are the root-only attack test's
(tests/classroom/test_exchange_attacks.py); the results here are written directly (no kernel).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.apps import NbGraderAPI
from nbgrader.utils import notebook_hash

from autograder.cli import main
from autograder.course.course import Course
from autograder.course.settings import REPO_ROOT, course_config
from autograder.pipeline.commands.export import export_frame
from autograder.pipeline.storage.refusals import load_refusals
from autograder.pipeline.storage.results import Status, SubmissionResult, save_result
from autograder.pipeline.storage.results import TestResult as CellResult  # (a Test* name would be collected by pytest)
from tests.grader.test_handins import exchange_collect, handin
from tests.support.course import ThrowawayCourse

ASSIGNMENT = "01_attention"
PAGE = f"{ASSIGNMENT}.html"
COURSE_ID = "transformers-from-scratch"


def secret_of(student: str) -> str:
    return (student.encode().hex() * 64)[:128]


def page_name(secret: str) -> str:
    return f"{notebook_hash(secret=secret, notebook_id=ASSIGNMENT)}.html"


def feedback_folder(root: Path, student: str, page: str | None = "PAGE", secret: str | None = "OWN") -> Path:
    """``grading/feedback/<student>/01_attention`` as ``python -m autograder feedback`` leaves it."""
    folder = root / "grading" / "feedback" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    if page is not None:
        (folder / PAGE).write_text(f"<p>{student}: {page}</p>")
    (folder / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    if secret is not None:
        (folder / "submission_secret.txt").write_text(secret_of(student) if secret == "OWN" else secret)
    return folder


# Each malformed feedback folder, and the reason its student is skipped; they sort between the honest ann and zoe.
def no_secret(folder: Path) -> None:
    (folder / "submission_secret.txt").unlink()


def no_timestamp(folder: Path) -> None:
    (folder / "timestamp.txt").unlink()


def page_is_a_folder(folder: Path) -> None:
    (folder / PAGE).unlink()
    (folder / PAGE).mkdir()


def feedback_folder_is_a_file(folder: Path) -> None:
    for entry in folder.iterdir():
        entry.unlink()
    folder.rmdir()
    folder.write_text("not a folder")


def secret_with_a_newline(folder: Path) -> None:
    (folder / "submission_secret.txt").write_text(secret_of("x") + "\n")


def secret_is_a_link_to_another_s(folder: Path) -> None:
    (folder / "submission_secret.txt").unlink()
    (folder / "submission_secret.txt").symlink_to(folder.parents[1] / "ann" / ASSIGNMENT / "submission_secret.txt")


def secret_is_a_folder(folder: Path) -> None:
    (folder / "submission_secret.txt").unlink()
    (folder / "submission_secret.txt").mkdir()


def empty_secret(folder: Path) -> None:
    (folder / "submission_secret.txt").write_text("")


def page_is_a_link(folder: Path) -> None:
    (folder / PAGE).unlink()
    (folder / PAGE).symlink_to(folder.parents[1] / "ann" / ASSIGNMENT / PAGE)


MALFORMED = {
    "b-no-secret": (no_secret, "no submission_secret.txt"),
    "c-no-timestamp": (no_timestamp, "no timestamp.txt"),
    "d-page-folder": (page_is_a_folder, f"{PAGE} is a folder, not a feedback page"),
    "e-not-a-folder": (feedback_folder_is_a_file, "its feedback folder is a plain file, not a folder"),
    "f-newline": (secret_with_a_newline, "submission_secret.txt is not a secret as nbgrader's submit writes it"),
    "g-linked-secret": (secret_is_a_link_to_another_s, "submission_secret.txt could not be opened"),
    "h-secret-folder": (secret_is_a_folder, "submission_secret.txt is a folder"),
    "i-empty-secret": (empty_secret, "submission_secret.txt is not a secret"),
    "k-page-link": (page_is_a_link, f"{PAGE} is a symbolic link, not a feedback page"),
}


@pytest.fixture
def course_root(tmp_path: Path) -> Path:
    """A course's grading folder (no notebook needed to release feedback) with one folder per case."""
    root = tmp_path / "course"
    for student in ("ann", "zoe", *MALFORMED):
        feedback_folder(root, student)
    feedback_folder(root, "j-no-page", page=None)  # nothing to release: not a skip
    for student, (break_it, _) in MALFORMED.items():
        break_it(root / "grading" / "feedback" / student / ASSIGNMENT)
    return root


def api(root: Path, exchange: Path) -> NbGraderAPI:
    config = course_config(root)
    config.Exchange.root = str(exchange)
    exchange.mkdir(exist_ok=True)
    return NbGraderAPI(config=config)


def released(exchange: Path) -> dict[str, str]:
    folder = exchange / COURSE_ID / "feedback"
    return {page.name: page.read_text() for page in folder.iterdir()} if folder.is_dir() else {}


def test_formgrader_s_release_skips_each_malformed_student_and_releases_every_other(
    course_root: Path, tmp_path: Path
) -> None:
    exchange = tmp_path / "exchange"
    answer = api(course_root, exchange).release_feedback(ASSIGNMENT)
    log = answer.get("log", "")
    honest = {page_name(secret_of("ann")): "<p>ann: PAGE</p>", page_name(secret_of("zoe")): "<p>zoe: PAGE</p>"}
    assert released(exchange) == honest, f"expected ann's and zoe's pages only; the log said:\n{log}"
    assert not list((exchange / COURSE_ID / "feedback").glob("*-tmp.html")), "a half-released page was left"
    assert answer["success"] is False, "formgrader must show its error window when a student was skipped"
    for student, (_, reason) in MALFORMED.items():
        assert f"Skipped the feedback of '{student}' on '{ASSIGNMENT}': {reason}" in log, (student, log)
    assert "j-no-page" not in log.replace("No feedback page for 'j-no-page'", "")
    assert "Released the feedback of 2 student(s)" in log and f"skipped {len(MALFORMED)}: b-no-secret (" in log
    shown = log + answer.get("error", "")
    for student in ("ann", "zoe", "x", *MALFORMED):
        name = page_name(secret_of(student))[:-5]
        assert secret_of(student) not in shown and name not in shown, f"{student}'s secret or page name was logged"


def command_line(root: Path, exchange: Path) -> subprocess.CompletedProcess:
    """``nbgrader release_feedback 01_attention`` in the course folder, with the course's settings."""
    exchange.mkdir(exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        f"from autograder.course.settings import configure\nc = configure(get_config(), {str(root)!r})\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
    )
    command = [sys.executable, "-m", "nbgrader", "release_feedback", ASSIGNMENT]
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(command, cwd=root, env=environment, capture_output=True, text=True, timeout=120)


def test_the_command_line_exits_1_after_releasing_the_others(course_root: Path, tmp_path: Path) -> None:
    exchange = tmp_path / "exchange"
    done = command_line(course_root, exchange)
    output = done.stdout + done.stderr
    assert done.returncode == 1, f"expected exit 1 (students skipped), got {done.returncode}:\n{output}"
    assert len(released(exchange)) == 2 and f"skipped {len(MALFORMED)}:" in output and "Traceback" not in output
    assert "Feedback released to" not in output and page_name(secret_of("ann"))[:-5] not in output, output


def test_one_student_alone_and_a_clean_class_succeed(tmp_path: Path) -> None:
    root, exchange = tmp_path / "course", tmp_path / "exchange"
    for student in ("ann", "zoe"):
        feedback_folder(root, student)
    assert api(root, exchange).release_feedback(ASSIGNMENT, "zoe")["success"] is True
    assert list(released(exchange)) == [page_name(secret_of("zoe"))]
    done = command_line(root, exchange)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(released(exchange)) == 2 and "Released the feedback of 2 student(s)" in done.stderr


# Hand-ins that lack a file nbgrader's later steps expect, or hold a folder where a file belongs.
def make_no_timestamp(folder: Path) -> None:
    handin(folder, notebook="NO TIMESTAMP")
    (folder / "timestamp.txt").unlink()


def make_no_secret(folder: Path) -> None:
    handin(folder)
    (folder / "submission_secret.txt").unlink()


def make_no_notebook(folder: Path) -> None:
    handin(folder)
    (folder / f"{ASSIGNMENT}.ipynb").unlink()


def make_notebook_folder(folder: Path) -> None:
    handin(folder)
    (folder / f"{ASSIGNMENT}.ipynb").unlink()
    (folder / f"{ASSIGNMENT}.ipynb").mkdir()
    (folder / f"{ASSIGNMENT}.ipynb" / "x.json").write_text("{}")


def make_timestamp_folder(folder: Path) -> None:
    handin(folder)
    (folder / "timestamp.txt").unlink()
    (folder / "timestamp.txt").mkdir()


def make_file_not_folder(folder: Path) -> None:
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file where the hand-in folder belongs")


HANDINS = {  # student -> how the hand-in is made, and the reason it is refused ("" if collected)
    "b-no-timestamp": (make_no_timestamp, ""),
    "c-no-secret": (make_no_secret, "no submission_secret.txt"),
    "d-no-notebook": (make_no_notebook, ""),
    "e-notebook-folder": (make_notebook_folder, f"{ASSIGNMENT}.ipynb is a folder where a notebook belongs"),
    "f-timestamp-folder": (make_timestamp_folder, "timestamp.txt is a folder where nbgrader's submit writes a file"),
    "g-file-not-folder": (make_file_not_folder, "not a folder"),
}


def test_collect_refuses_what_cannot_travel_back_and_every_later_step_goes_on(
    tmp_path: Path, throwaway_course: ThrowawayCourse, capsys: pytest.CaptureFixture[str]
) -> None:
    course: Course = throwaway_course(ASSIGNMENT)
    exchange = tmp_path / "exchange"
    inbound = exchange / COURSE_ID / "inbound"
    for student, (make, _) in {"a-ann": (handin, ""), **HANDINS, "z-zoe": (handin, "")}.items():
        folder = inbound / f"{student}+{ASSIGNMENT}+2026-12-01 10:00:00.000000 UTC+{student[0] * 8}"
        make(folder)
        if (folder / "submission_secret.txt").is_file():
            (folder / "submission_secret.txt").write_text(secret_of(student))  # each student's own
    exchange_collect(course, exchange)
    refused = {refusal.student: refusal.reason for refusal in load_refusals(course.grading.path)}
    expected = {student: reason for student, (_, reason) in HANDINS.items() if reason}
    assert set(refused) == set(expected), refused
    for student, reason in expected.items():
        assert reason in refused[student], (student, refused[student])
    collected = sorted(p.name for p in course.grading.submitted().iterdir())
    assert collected == ["a-ann", "b-no-timestamp", "d-no-notebook", "z-zoe"]
    assert (course.grading.submitted("b-no-timestamp", ASSIGNMENT) / "timestamp.txt").is_file()
    # Graded (written directly: the grader's own isolation is tests/grader/test_grader_hostile.py's
    # "nothing_submitted"), then feedback, release and export, each for everyone.
    for student in collected:
        status = Status.MISSING if student == "d-no-notebook" else Status.GRADED
        tests = [] if status == Status.MISSING else [CellResult(ASSIGNMENT, "sdpa_values", 2.0, score=2.0)]
        save_result(course, SubmissionResult(ASSIGNMENT, student, status, "", "d", tests=tests))
    assert main(["--root", str(course.root), "feedback"]) == 0
    capsys.readouterr()
    answer = api(course.root, exchange).release_feedback(ASSIGNMENT)
    assert answer["success"] is True, answer
    pages = {page_name(secret_of(student)) for student in ("a-ann", "b-no-timestamp", "z-zoe")}
    assert set(released(exchange)) == pages, answer.get("log")
    frame = export_frame(course).set_index("student")
    assert set(frame.index) == {"a-ann", "b-no-timestamp", "d-no-notebook", "z-zoe", *expected}
    no_secret_row = frame.loc["c-no-secret"]
    assert no_secret_row["status"] == "missing" and "submission_secret" in no_secret_row["refused"], no_secret_row
