"""The student's submit on the hub refuses, in the student's edition, what the instructors' collect would refuse.

As one user (the exchange attack test runs nbgrader as real system users): a student's folder is
measured with collect's own code and limits before anything is handed in, and again once copied
into the exchange; a refusal says why in English or Chinese (the edition the assignment's
notebooks name), in the Assignments tab (nbgrader's own handler, in process) and on the command
line (``nbgrader submit``), and leaves nothing in the exchange.
"""

import getpass
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeFactory
from nbgrader.exchange.abc.exchange import ExchangeError
from nbgrader.server_extensions.assignment_list.handlers import AssignmentList
from traitlets.config import Config

from autograder.pipeline.exchange.exchange_collect import SafeExchangeCollect
from autograder.pipeline.exchange.handins import MAX_BYTES, HandinLimits, RefusedHandin, measure_handin
from classroom.layout import COURSE_ID
from classroom.provision import EXCHANGE_SETTINGS, RUNTIME_PARTS
from classroom.student_submit import PrivateSubmit
from classroom.student_view import VIEW_VARIABLE
from tests.support.small_disk import small_disk

ASSIGNMENT = "01_attention"
REPO = Path(__file__).resolve().parents[2]
REFUSED = {"en": "Not handed in: ", "zh": "未提交："}


@dataclass
class Student:
    home: Path
    exchange: Path
    config: Config

    @property
    def folder(self) -> Path:
        return self.home / ASSIGNMENT

    @property
    def inbound(self) -> list[Path]:
        return list((self.exchange / COURSE_ID / "inbound").iterdir())

    def submit(self) -> PrivateSubmit:
        coursedir = CourseDirectory(config=self.config)
        coursedir.assignment_id = ASSIGNMENT
        submit = PrivateSubmit(coursedir=coursedir, authenticator=Authenticator(config=self.config), config=self.config)
        submit.assignment_dir = str(self.home)
        submit.start()
        return submit

    def refusal(self) -> str:
        with pytest.raises(ExchangeError) as refused:
            self.submit()
        assert self.inbound == [], "a refused hand-in left a folder in the exchange"
        return str(refused.value)


def make_student(tmp_path: Path, edition: str, **limits: int) -> Student:
    """A student's home with the fetched assignment (its notebook in ``edition``), an exchange, the settings file."""
    exchange, home = tmp_path / "exchange", tmp_path / "home"
    (exchange / COURSE_ID / "outbound" / ASSIGNMENT).mkdir(parents=True)
    (exchange / COURSE_ID / "inbound").mkdir()
    (home / ASSIGNMENT).mkdir(parents=True)
    metadata = {"tfcourse": {"edition": edition}} if edition != "en" else {}
    notebook = {"cells": [], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    (home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text(json.dumps(notebook))
    lines = [f"c.Exchange.root = {str(exchange)!r}", f"c.Exchange.cache = {str(tmp_path / 'cache')!r}",
             f"c.CourseDirectory.course_id = {COURSE_ID!r}",
             "c.ExchangeFactory.submit = 'classroom.student_submit.PrivateSubmit'"]
    lines += [f"c.SafeExchangeCollect.{name} = {value}" for name, value in limits.items()]
    (home / "nbgrader_config.py").write_text("\n".join(lines) + "\n")  # what the hub's common settings hold
    config = Config()
    config.Exchange.root, config.Exchange.cache = str(exchange), str(tmp_path / "cache")
    config.CourseDirectory.course_id = COURSE_ID
    for name, value in limits.items():
        setattr(config.SafeExchangeCollect, name, value)
    return Student(home, exchange, config)


@pytest.fixture(autouse=True)
def no_edition_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The edition comes from the notebooks (no hub's student view); no one's Jupyter settings but the test's."""
    monkeypatch.delenv("TFCOURSE_EDITION", raising=False)
    monkeypatch.delenv(VIEW_VARIABLE, raising=False)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "jupyter"))


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_hand_in_over_collect_s_byte_limit_is_refused_before_it_is_handed_in(
    tmp_path: Path, edition: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tester's 70 MB hand-in: "Submitted", then refused at collect. Now refused at submit, and said why."""
    student = make_student(tmp_path, edition)
    with (student.folder / "model.pt").open("wb") as handle:
        handle.truncate(70_000_000)  # sparse: it takes no disk, and still counts for its size
    copies = []
    monkeypatch.setattr(PrivateSubmit, "do_copy", lambda self, *args, **kwargs: copies.append(args))
    message = student.refusal()
    assert copies == [], "refused before a byte was copied into the exchange"
    assert message.startswith(REFUSED[edition]) and f"{MAX_BYTES:,}" in message, message
    assert ("字节" in message) == (edition == "zh") and ("bytes" in message) == (edition == "en"), message
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.ipynb"))
    with pytest.raises(RefusedHandin, match="more than"):  # collect, with its own settings, says the same
        measure_handin(student.folder, None, SafeExchangeCollect(config=student.config).limits)


@pytest.mark.parametrize(
    ("edition", "kind", "said"),
    [("en", "link", "is a symbolic link: a hand-in holds plain files and folders only"),
     ("zh", "link", "./solution.ipynb 是符号链接：作业只能包含普通文件和文件夹"),
     ("en", "fifo", "is a named pipe"), ("zh", "fifo", "是命名管道")],
)
def test_links_and_special_files_are_refused_in_the_student_s_edition(
    tmp_path: Path, edition: str, kind: str, said: str
) -> None:
    student = make_student(tmp_path, edition)
    if kind == "link":
        (student.folder / "solution.ipynb").symlink_to("/etc/hostname")  # nbgrader's copy would follow it
    else:
        os.mkfifo(student.folder / "solution.ipynb")
    message = student.refusal()
    assert message.startswith(REFUSED[edition]) and said in message, message


def test_the_hub_s_word_on_the_student_s_language_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The student view the hub publishes (as the submit's late and unchanged questions read it) says Chinese."""
    student = make_student(tmp_path, "en")
    views = tmp_path / "student-view"
    views.mkdir()
    (views / f"{getpass.getuser()}.json").write_text(json.dumps({"language": "zh", "deadlines": []}))
    monkeypatch.setenv(VIEW_VARIABLE, str(views))
    (student.folder / "data").symlink_to(tmp_path)
    assert student.refusal().startswith("未提交：./data 是符号链接")


def test_the_limits_are_collect_s_settings_and_the_hand_in_is_measured_again_as_collect_sees_it(
    tmp_path: Path,
) -> None:
    """Three files pass the first measure; handed in with nbgrader's two marks they are five: refused, removed."""
    student = make_student(tmp_path, "en", max_files=4, max_bytes=10 * MAX_BYTES)
    for name in ("notes.txt", "data.csv"):
        (student.folder / name).write_text("mine")
    collect = SafeExchangeCollect(config=student.config)
    assert collect.limits == HandinLimits(10 * MAX_BYTES, 4)
    message = student.refusal()
    assert "more than 4 files and folders" in message and "4 files and folders, plain" in message, message
    (student.folder / "data.csv").unlink()
    (student.folder / "notes.txt").unlink()
    student.submit()
    (handed_in,) = student.inbound
    assert measure_handin(handed_in, os.getuid(), collect.limits).files == 3, "collect takes what submit let through"


def test_what_nbgrader_leaves_out_is_not_counted(tmp_path: Path) -> None:
    """Checkpoints are not handed in (nbgrader's ignore patterns): 150 of them do not break the 100 files limit."""
    student = make_student(tmp_path, "en")
    checkpoints = student.folder / ".ipynb_checkpoints"
    checkpoints.mkdir()
    for index in range(150):
        (checkpoints / f"{index}.ipynb").write_text("{}")
    student.submit()
    (handed_in,) = student.inbound
    assert sorted(path.name for path in handed_in.iterdir()) == [
        f"{ASSIGNMENT}.ipynb", "submission_secret.txt", "timestamp.txt"
    ]


def test_the_assignments_tab_and_the_command_line_say_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """nbgrader's own Assignments-tab handler (in process) and ``nbgrader submit`` show the Chinese message."""
    student = make_student(tmp_path, "zh")
    with (student.folder / "model.pt").open("wb") as handle:
        handle.truncate(70_000_000)
    monkeypatch.chdir(student.home)  # the student's server runs in their home, whose settings the tab reads
    tab = AssignmentList()
    tab.root_dir = str(student.home)
    answer = tab.submit_assignment(COURSE_ID, ASSIGNMENT)
    assert answer["success"] is False and "未提交：超过 67,108,864 字节" in answer["value"], answer
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "nbgrader", "submit", ASSIGNMENT], cwd=student.home, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "未提交：超过 67,108,864 字节" in done.stderr, done.stderr[-2000:]
    assert student.inbound == []


def test_the_ngshare_hub_s_submit_makes_the_same_check_before_it_uploads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The class the ngshare hub's settings name: refused before a byte is uploaded; a good folder goes on."""
    monkeypatch.setenv("USER", getpass.getuser())  # ngshare_exchange reads it on import
    monkeypatch.setenv("TFCOURSE_NGSHARE_URL", "http://127.0.0.1:9/services/ngshare")  # nothing listens there
    config = Config()
    exec(EXCHANGE_SETTINGS["ngshare"].format(root=""), {"c": config})  # what provision writes for every user
    config.Exchange.cache = str(tmp_path / "cache")
    config.CourseDirectory.course_id = COURSE_ID
    student = make_student(tmp_path, "zh")
    uploads = []
    checked = ExchangeFactory(config=config).submit  # the class, imported by name as nbgrader does
    upload = checked.post_submission  # ngshare-exchange's own, to a port where nothing listens
    monkeypatch.setattr(checked, "post_submission", lambda self, folder: uploads.append(folder) or "2026-11-28 1")
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT
    submit = checked(coursedir=coursedir, authenticator=Authenticator(config=config), config=config)
    submit.assignment_dir = str(student.home)
    (student.folder / "data").symlink_to(tmp_path)
    with pytest.raises(ExchangeError, match="未提交：./data 是符号链接"):
        submit.start()
    assert uploads == []
    (student.folder / "data").unlink()
    submit.start()  # ngshare's own steps follow: its list fails (nothing listens), then the upload
    assert uploads == [str(student.folder)]
    # ngshare does not answer the upload (down, restarting): ngshare-exchange only logs "Failed to submit." and
    # returns, and nbgrader (the command line and the Assignments tab alike) would report a hand-in.
    monkeypatch.setattr(checked, "post_submission", upload)
    with pytest.raises(ExchangeError, match="未确认：课程的交换服务（ngshare）没有回应本次提交"):
        submit.start()


def test_the_student_s_runtime_holds_what_the_submit_imports(tmp_path: Path) -> None:
    """A student's server finds the course's code only in the hub's runtime (provision's RUNTIME_PARTS): the submit
    and the measure it shares with collect import from there alone, not from a full checkout of the grader."""
    runtime = tmp_path / "runtime"
    for part in RUNTIME_PARTS:
        if (REPO / part).is_file() and part.endswith(".py"):
            (runtime / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / part, runtime / part)
        elif (REPO / part).is_dir() and part != "data" and not part.startswith(("data/", "notebooks")):
            shutil.copytree(REPO / part, runtime / part, ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import classroom.student_submit as s, autograder\n"
            "print(s.measure_handin.__module__, autograder.__file__)")
    done = subprocess.run([sys.executable, "-I", "-c", code, str(runtime)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["autograder.pipeline.exchange.handins", str(runtime / "autograder" / "__init__.py")]


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_full_exchange_disk_fails_the_submit_clearly_and_leaves_no_half_hand_in(tmp_path: Path, edition: str) -> None:
    """The disk full during a submit: a clear error, nothing half handed in (collect would take it), the earlier
    hand-in intact. The exchange lies on a 1 MiB tmpfs mounted for the test."""
    student = make_student(tmp_path, edition)
    student.exchange.rename(tmp_path / "exchange-made")
    with small_disk(student.exchange, "1m"):
        shutil.copytree(tmp_path / "exchange-made", student.exchange, dirs_exist_ok=True)
        student.submit()
        (earlier,) = student.inbound
        before = {path.name: path.read_bytes() for path in earlier.iterdir()}
        (student.folder / "data.bin").write_bytes(os.urandom(2 * 1024 * 1024))  # within the limits, not the disk
        with pytest.raises(ExchangeError) as refused:
            student.submit()
        said = {"en": "Not handed in: the exchange's disk is full (No space left on device)", "zh": "交换区磁盘已满"}
        assert said[edition] in str(refused.value), str(refused.value)
        assert student.inbound == [earlier], "a half-copied hand-in was left for collect to take"
        assert {path.name: path.read_bytes() for path in earlier.iterdir()} == before
