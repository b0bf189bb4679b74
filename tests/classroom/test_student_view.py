"""The student's view of the hub, without root or a hub: due dates and extensions published, DUE_DATES.md,
the Chinese edition on fetch, and a submit that asks before a late or unchanged hand-in.

The exchange is nbgrader's filesystem exchange in a temporary folder, driven by the hub's own classes
(:mod:`classroom.fetch_edition`, :class:`classroom.student_submit.PrivateSubmit`) as this account;
the published view is written as the hub's service writes it (:mod:`classroom.publish_student_view`).
The hub test (``tests/browser/test_classroom_hub.py``) runs the same parts as real students, in Chromium.
"""

import getpass
import glob
import grp
import json
import os
import pwd
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeError
from nbgrader.server_extensions.assignment_list.handlers import AssignmentList
from traitlets.config import Config

from autograder.course.settings import REPO_ROOT
from classroom.accounts import recorded
from classroom.due_dates_view import FILE_NAME, refresh
from classroom.fetch_edition import EditionFetch, EditionRelease
from classroom.layout import STUDENTS, HubLayout
from classroom.publish_student_view import look_once, publish, views
from classroom.roster import LANGUAGES_FILE, read_languages, save_languages
from classroom.student_submit import PrivateSubmit
from classroom.student_view import (
    VIEW_FOLDER,
    VIEW_VARIABLE,
    Deadline,
    StudentView,
    due_dates_markdown,
    duration,
    read_view,
)
from classroom.submit_guard import CONFIRM_MINUTES, confirmation_file
from classroom.system_users import ensure_user, remove_user
from tfcourse.language import notebook_edition

ASSIGNMENT, COURSE = "01_attention", "test-course"
DUE = datetime.fromisoformat("2026-12-07T23:59:00+08:00")


def course_with_dates(root: Path, due_dates: str, extensions: str | None) -> Path:
    """A course folder as the service reads it: the notebooks' folders, due_dates.csv, extensions.csv."""
    for name in (ASSIGNMENT, "02_multi_head_attention"):
        (root / "solutions" / name).mkdir(parents=True)
        (root / "solutions" / name / f"{name}.ipynb").write_text("{}")
    (root / "due_dates.csv").write_text("assignment,due\n" + due_dates)
    if extensions is not None:
        (root / "extensions.csv").write_text("student,assignment,due\n" + extensions)
    return root


def test_each_student_s_view_holds_every_due_date_their_extension_and_their_language(tmp_path: Path) -> None:
    course = course_with_dates(tmp_path, f"{ASSIGNMENT},2026-12-07T23:59:00+08:00\n02_multi_head_attention,\n",
                               f"dai,{ASSIGNMENT},+26h\n")
    published = views(course, {"dai": "zh", "eve": "fr"}, ["ada", "dai", "eve"])
    ada, dai = published["ada"], published["dai"]
    assert ada.language == "en" and dai.language == "zh" and published["eve"].language == "en"  # unknown: English
    assert ada.deadline(ASSIGNMENT) == Deadline(ASSIGNMENT, DUE, None)
    assert dai.deadline(ASSIGNMENT).own_due == DUE + timedelta(hours=26)
    assert dai.deadline(ASSIGNMENT).own_due.utcoffset() == timedelta(hours=8)  # shown as the instructor wrote it
    assert dai.deadline("02_multi_head_attention") == Deadline("02_multi_head_attention", None, None)
    assert StudentView.from_json(dai.to_json()) == dai

    english, chinese = due_dates_markdown(ada), due_dates_markdown(dai)
    assert f"| {ASSIGNMENT} | 2026-12-07 23:59 (UTC+08:00) | 2026-12-07 23:59 (UTC+08:00) |" in english
    assert "| 02_multi_head_attention | no due date | no due date |" in english
    assert f"| {ASSIGNMENT} | 2026-12-07 23:59 (UTC+08:00) | 2026-12-09 01:59 (UTC+08:00)（你的延期） |" in chinese
    assert chinese.startswith("# 截止日期") and "no due date" not in chinese and "无截止日期" in chinese


def test_a_bad_extension_file_is_refused_whole(tmp_path: Path) -> None:
    course = course_with_dates(tmp_path, f"{ASSIGNMENT},\n", f"dai,{ASSIGNMENT},+26h\n")
    with pytest.raises(ValueError, match="extends a due date that due_dates.csv does not set"):
        views(course, {}, ["dai"])


@pytest.fixture
def published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Publish a view for this account, as the hub's service does; the server's and the submit's reader see it."""
    folder = tmp_path / "student-view"
    folder.mkdir()
    monkeypatch.setenv(VIEW_VARIABLE, str(folder))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))  # the submit's cache, the late confirmation

    def publish(language: str = "en", due: datetime | None = None, own_due: datetime | None = None) -> None:
        view = StudentView(language, [Deadline(ASSIGNMENT, due, own_due)])
        (folder / f"{getpass.getuser()}.json").write_text(view.to_json())

    return publish


def test_due_dates_md_follows_the_published_view_read_only(tmp_path: Path, published) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert not refresh(home) and not (home / FILE_NAME).exists()  # nothing published yet: nothing written
    published("en", DUE)
    assert refresh(home) and not refresh(home)  # written once, then left alone while nothing changes
    path = home / FILE_NAME
    assert "2026-12-07 23:59 (UTC+08:00)" in path.read_text() and path.stat().st_mode & 0o777 == 0o444
    published("zh", DUE, DUE + timedelta(days=2))
    assert refresh(home) and "2026-12-09 23:59 (UTC+08:00)（你的延期）" in path.read_text()
    elsewhere = tmp_path / "not-the-home.txt"
    elsewhere.write_text("kept")
    path.unlink()
    path.symlink_to(elsewhere)  # a link in its place is replaced, never written through
    assert refresh(home) and not path.is_symlink() and elsewhere.read_text() == "kept"


class Exchange:
    """A course folder with both editions' releases, a filesystem exchange and a student's home, in tmp_path."""

    def __init__(self, tmp_path: Path):
        self.course, self.root, self.home = tmp_path / "course", tmp_path / "exchange", tmp_path / "home"
        for release in ("notebooks", "notebooks_zh"):
            shutil.copytree(REPO_ROOT / release / ASSIGNMENT, self.course / release / ASSIGNMENT)
        self.home.mkdir()

    def run(self, action: type, **settings: object) -> None:
        config = Config()
        config.CourseDirectory.root = str(self.course)
        config.CourseDirectory.course_id = COURSE
        config.CourseDirectory.assignment_id = ASSIGNMENT
        config.CourseDirectory.release_directory = "notebooks"
        config.Exchange.root = str(self.root)
        config.Exchange.assignment_dir = str(self.home)
        for name, value in settings.items():
            setattr(config[action.__name__], name, value)
        coursedir = CourseDirectory(config=config)
        action(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()

    @property
    def notebook(self) -> Path:
        return self.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"

    def hand_ins(self) -> list[Path]:
        return sorted((self.root / COURSE / "inbound").glob(f"*+{ASSIGNMENT}+*"))


@pytest.fixture
def exchange(tmp_path: Path) -> Exchange:
    released = Exchange(tmp_path)
    released.run(EditionRelease)
    return released


def test_the_release_carries_the_chinese_notebook_where_nbgrader_does_not_look(exchange: Exchange) -> None:
    outbound = exchange.root / COURSE / "outbound"
    assert [Path(path).name for path in glob.glob(f"{outbound}/*")] == [ASSIGNMENT]  # what nbgrader lists
    translated = outbound / ".editions" / "zh" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert notebook_edition(translated) == "zh"
    assert notebook_edition(outbound / ASSIGNMENT / f"{ASSIGNMENT}.ipynb") is None  # the English release


def test_a_chinese_student_fetches_the_chinese_notebook(exchange: Exchange, published) -> None:
    published("zh")
    exchange.run(EditionFetch)
    assert notebook_edition(exchange.notebook) == "zh"
    assert sorted(path.name for path in exchange.notebook.parent.iterdir()) == [f"{ASSIGNMENT}.ipynb"]


def test_an_english_student_and_an_own_setting(exchange: Exchange, published) -> None:
    published("zh")  # the roster says Chinese; the student's own setting says English
    exchange.run(EditionFetch, edition="en")
    assert notebook_edition(exchange.notebook) is None
    shutil.rmtree(exchange.notebook.parent)
    published("en")
    exchange.run(EditionFetch, edition="zh")  # and the other way round
    assert notebook_edition(exchange.notebook) == "zh"


def test_a_fetch_again_never_replaces_the_student_s_work(exchange: Exchange, published) -> None:
    published("zh")
    exchange.run(EditionFetch)
    exchange.notebook.write_text(exchange.notebook.read_text().replace("softmax", "SOFTMAX, MY WORK"))
    exchange.run(EditionFetch, replace_missing_files=True)
    assert "MY WORK" in exchange.notebook.read_text()


def test_without_a_hub_the_fetch_is_nbgrader_s(exchange: Exchange, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(VIEW_VARIABLE, raising=False)
    assert read_view() is None
    exchange.run(EditionFetch)
    assert notebook_edition(exchange.notebook) is None


def submit(exchange: Exchange) -> str:
    """The hub's submit, as the Assignments tab runs it; '' when it handed in, else the error it shows."""
    try:
        exchange.run(PrivateSubmit)
    except ExchangeError as error:
        return str(error)
    return ""


def late_submit(exchange: Exchange, due: datetime, language: str = "en") -> tuple[str, set[str]]:
    """The refused submit's message, and each lateness it may state: the view keeps the due date to the minute,
    and the clock moves while the submit runs, so the stated lateness is that of a moment between the two reads."""
    on_the_minute = due.replace(second=0, microsecond=0)
    before = datetime.now(UTC)
    refused = submit(exchange)
    after = datetime.now(UTC)
    return refused, {duration((moment - on_the_minute).total_seconds(), language) for moment in (before, after)}


def edit(exchange: Exchange, text: str) -> None:
    notebook = json.loads(exchange.notebook.read_text())
    notebook["cells"][0]["source"] = text
    exchange.notebook.write_text(json.dumps(notebook))


def test_an_unchanged_hand_in_keeps_the_earlier_one_and_its_time(exchange: Exchange, published) -> None:
    published("en", datetime.now(UTC) + timedelta(days=1))
    exchange.run(EditionFetch)
    assert submit(exchange) == "" and len(exchange.hand_ins()) == 1
    first_time = (exchange.hand_ins()[0] / "timestamp.txt").read_text()
    due = datetime.now(UTC) - timedelta(hours=1)
    published("en", due)  # now after the due date: a resubmission would be late
    refused = submit(exchange)
    assert refused.startswith("Nothing changed since your hand-in of " + first_time), refused
    assert len(exchange.hand_ins()) == 1  # nothing new in the exchange: collect keeps the on-time hand-in
    edit(exchange, "a change")
    refused, lateness = late_submit(exchange, due)  # a real change is a new (late) hand-in: asked first
    assert any(f"would be {late} late" in refused for late in lateness) and lateness <= {"1 h", "1 h 1 min"}, refused


def test_a_late_submit_asks_first_then_hands_in(exchange: Exchange, published) -> None:
    due = datetime.now(UTC).astimezone(DUE.tzinfo) - timedelta(hours=2, minutes=3)
    published("zh", due - timedelta(days=1), due)  # the student's extension, past too
    exchange.run(EditionFetch)
    refused, lateness = late_submit(exchange, due, "zh")
    assert f"{ASSIGNMENT} 的截止时间是 {due.strftime('%Y-%m-%d %H:%M')} (UTC+08:00)" in refused, refused
    assert "2 小时 3 分钟" in lateness or "2 小时 4 分钟" in lateness, lateness
    assert any(f"迟交 {late}" in refused for late in lateness), (refused, lateness)
    assert f"请在 {CONFIRM_MINUTES} 分钟内再次点击" in refused, refused
    assert exchange.hand_ins() == []  # asked, nothing handed in
    assert submit(exchange) == "" and len(exchange.hand_ins()) == 1  # confirmed: handed in, late
    edit(exchange, "a later change")
    assert "迟交" in submit(exchange)  # each late hand-in is asked about again
    assert len(exchange.hand_ins()) == 1


def test_an_old_request_does_not_confirm(exchange: Exchange, published) -> None:
    due = datetime.now(UTC) - timedelta(minutes=5)
    published("en", due)
    exchange.run(EditionFetch)
    refused, lateness = late_submit(exchange, due)
    assert any(f"would be {late} late" in refused for late in lateness) and lateness <= {"5 min", "6 min"}, refused
    asked = confirmation_file(COURSE, ASSIGNMENT)
    stale = asked.stat().st_mtime - (CONFIRM_MINUTES * 60 + 1)
    os.utime(asked, (stale, stale))
    assert "would be" in submit(exchange) and exchange.hand_ins() == []  # asked again, not handed in
    assert submit(exchange) == "" and len(exchange.hand_ins()) == 1


def test_the_roster_s_language_column(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name,language\nada,Ada L,\ndai,Dai W,ZH\n")
    assert read_languages(roster) == {"ada": "en", "dai": "zh"}
    save_languages(tmp_path, {"ada": "zh"})
    save_languages(tmp_path, read_languages(roster))  # a second roster run updates, keeps the others
    save_languages(tmp_path, {"eve": "zh"})
    assert recorded(tmp_path, LANGUAGES_FILE) == {"ada": "en", "dai": "zh", "eve": "zh"}
    assert (tmp_path / "languages.json").stat().st_mode & 0o777 == 0o600
    roster.write_text("student\nada\n")
    assert read_languages(roster) == {}  # no column: everyone English
    roster.write_text("id,language\nada,fr\n")
    with pytest.raises(SystemExit, match=r"roster.csv:2: language 'fr' for ada: use one of en, zh"):
        read_languages(roster)


@pytest.mark.skipif(os.geteuid() != 0, reason="publishing makes files other accounts own: root only (CI runs as root)")
def test_each_view_is_its_student_s_alone_and_a_gone_student_s_is_removed(tmp_path: Path) -> None:
    student = "tfview-ada"
    remove_user(student)
    ensure_user(student, STUDENTS)
    folder = tmp_path / VIEW_FOLDER
    try:
        folder.mkdir()
        (folder / "tfview-gone.json").write_text("{}")  # a student no longer in the group
        (folder / f"{student}.json").symlink_to(tmp_path / "elsewhere.json")
        assert publish(folder, {student: StudentView("zh", [Deadline(ASSIGNMENT, DUE)])}) == [student]
        path, account = folder / f"{student}.json", pwd.getpwnam(student)
        assert not path.is_symlink() and not (tmp_path / "elsewhere.json").exists()
        assert (path.stat().st_uid, path.stat().st_gid, path.stat().st_mode & 0o777) == (0, account.pw_gid, 0o640)
        assert grp.getgrgid(account.pw_gid).gr_name == student  # a group of its own: nobody else reads it
        assert folder.stat().st_mode & 0o777 == 0o711 and sorted(p.name for p in folder.iterdir()) == [path.name]
        assert publish(folder, {student: StudentView("zh", [Deadline(ASSIGNMENT, DUE)])}) == []  # unchanged
    finally:
        remove_user(student)


def test_a_student_s_own_setting_in_their_home_as_the_assignments_tab_reads_it(
    exchange: Exchange, published, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Assignments tab's fetch (nbgrader's server extension, run here in-process from the student's home) reads
    ``~/nbgrader_config.py``: ``c.EditionFetch.edition = "zh"`` there gives the Chinese notebook."""
    published("en")  # the roster: English
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(exchange.home / "no-system-config"))
    (exchange.home / "nbgrader_config.py").write_text(
        f"c.CourseDirectory.course_id = {COURSE!r}\n"
        f"c.Exchange.root = {str(exchange.root)!r}\n"
        "c.ExchangeFactory.fetch_assignment = 'classroom.fetch_edition.EditionFetch'\n"
        "c.EditionFetch.edition = 'zh'  # the student's own setting\n"
    )
    monkeypatch.chdir(exchange.home)  # a student's server runs in their home
    manager = AssignmentList()
    manager.root_dir = str(exchange.home)
    assert manager.fetch_assignment(COURSE, ASSIGNMENT) == {"success": True}
    assert notebook_edition(exchange.notebook) == "zh"


def test_a_date_that_does_not_parse_keeps_the_last_published_views(tmp_path: Path) -> None:
    layout = HubLayout(tmp_path)
    course_with_dates(layout.course, f"{ASSIGNMENT},2026-12-07T23:59:00+08:00\n", f"dai,{ASSIGNMENT},next friday\n")
    kept = layout.prefix / VIEW_FOLDER / "dai.json"
    kept.parent.mkdir()
    kept.write_text(StudentView("zh", [Deadline(ASSIGNMENT, DUE)]).to_json())
    said = look_once(layout, layout.state)
    assert said.startswith("student-view: kept the last published due dates: ") and "extensions.csv:2" in said, said
    assert StudentView.from_json(kept.read_text()).language == "zh"  # untouched
