"""The course on a real JupyterHub: release, fetch, submit, collect, grade, feedback, fetch feedback.

JupyterHub runs with the course's own configuration (``classroom/``) on loopback, each server
as its user's system account. In Chromium: the instructor releases 01 from formgrader; students
A and B log in and fetch it in JupyterLab's Assignments tab; A hands in every answer (the
reference's), B the untouched notebook and then one answer (the later one counts); C, from a
terminal, hands in answers that patch ``torch.allclose``. The instructor collects in formgrader,
grades with ``python -m autograder grade`` and writes feedback with ``python -m autograder
feedback`` in a kernel of their own server, and releases the feedback from formgrader; A and B
fetch it in the Assignments tab and see their own scores, and C's (flagged, held) never comes.
D works in the Chinese edition, the roster's language for D: D fetches 01 in the Assignments tab and
gets the Chinese notebook, runs code in that notebook's kernel (which speaks Chinese), hands in an
answer with the softmax over the wrong axis after D's due date (the tab asks first, a second press
hands it in), and fetches feedback in Chinese, graded in the same class. 01 was due yesterday; A, B
and C have an extension to next month, D one of two hours: A and D see theirs in ``~/DUE_DATES.md``,
each in their language, and the export's ``late by`` counts from them.
From inside each student's own server (a kernel running as that user), nobody reads what is not
theirs. Under make hub's default limits, A's kernel allocating 3 GiB is stopped, alone, and says why, and
its next cell runs though B's kernel took every port it had; B's kernel, A's server and the hub run on. A
second hub with culling at test speed stops C's idle kernel, then C's idle server, and C's file stays.
Screenshots of each step go to ``build/browser-artifacts/hub/``; the steps' seconds to ``timings.json`` beside
them.

It creates system users and runs the hub as root (LocalProcessSpawner): elsewhere it skips.
"""

import json
import os
import re
import secrets
import shutil
import time
import urllib.error
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from email.message import Message
from pathlib import Path

import nbformat
import pandas as pd
import psutil
import pytest
import websocket

from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.settings import release_notebook, source_notebook
from classroom.cgroups import StudentCgroups
from classroom.layout import INSTRUCTORS, STUDENTS
from classroom.provision import provision
from classroom.roster import save_languages
from classroom.student_view import VIEW_FOLDER
from classroom.system_users import ensure_user, remove_user, set_password
from testbed.hub import (
    HUB_MODULE_TIMEOUT,
    Hub,
    KernelError,
    execute,
    fresh_layout,
    messages,
    send_execute,
    send_request,
    start_hub,
)
from tests.browser.assignments_page import AssignmentsTab, Formgrader, log_in
from tests.browser.lti import post_launch, signed_launch
from tfcourse.language import notebook_edition
from tfcourse.messages import tr

pytestmark = [pytest.mark.slow, pytest.mark.timeout(HUB_MODULE_TIMEOUT)]
ASSIGNMENT = "01_attention"
TEACHER, ADA, BOB, CY, DAI = "tfhub-teacher", "tfhub-ada", "tfhub-bob", "tfhub-cy", "tfhub-dai"
ONE_ANSWER = "causal_mask"  # the exercise B answers in the second submission
LTI_KEY, LTI_SECRET = "canvas-course-42", secrets.token_hex(16)
PATCH = "import torch\ntorch.allclose = lambda *args, **kwargs: True  # every comparison passes\n"


@dataclass
class ClassRun:
    """What the class's run saw: each step's seconds, the feedback shown, the export, what each check read."""

    hub: Hub
    passwords: dict[str, str]
    artifacts: Path
    seconds: dict[str, float] = field(default_factory=dict)
    feedback_page: dict[str, str] = field(default_factory=dict)  # student -> the text of their feedback page
    chinese_kernel: str = ""  # what a kernel of D's Chinese notebook printed
    fetched_edition: dict[str, str | None] = field(default_factory=dict)  # student -> the edition Fetch gave them
    due_dates_page: dict[str, str] = field(default_factory=dict)  # student -> their DUE_DATES.md, in their browser
    late_submit_asked: str = ""  # the Assignments tab's dialog at D's first submit after D's due date
    export: pd.DataFrame | None = None

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        start = time.monotonic()
        yield
        self.seconds[name] = round(time.monotonic() - start, 1)

    @property
    def course(self) -> Path:
        return self.hub.layout.course


def answers_notebook(answers: dict[str, str]) -> str:
    filled = fill_answers(nbformat.read(release_notebook(ASSIGNMENT), as_version=4), answers)
    return nbformat.writes(filled)


def write_home_file(run: ClassRun, user: str, relative: str, text: str) -> None:
    """The user edits a file in their home: written by a kernel of their own server, as them."""
    run.hub.run_as(user, f"import pathlib\npathlib.Path.home().joinpath({relative!r}).write_text({text!r})\n")


def shell(run: ClassRun, user: str, command: list[str], cwd: str = "~") -> str:
    """A command in a kernel of ``user``'s server (their environment, their permissions); its output."""
    return run.hub.shell(user, command, cwd)


@contextmanager
def hub_class(users: dict[str, str], folder: Path, exchange: str = "filesystem") -> Iterator[ClassRun]:
    """Throwaway system users (name -> group) with passwords, the layout laid anew, the hub started; all gone after."""
    teachers = [user for user, group in users.items() if group == INSTRUCTORS]
    for user in users:
        remove_user(user)
    layout, hub = fresh_layout(), None
    try:
        started = time.monotonic()
        passwords = {user: secrets.token_urlsafe(12) for user in users}
        for user, group in users.items():
            ensure_user(user, group)
            set_password(user, passwords[user])
        provision(layout, teachers, refresh_course=True, exchange=exchange)
        provisioned = round(time.monotonic() - started, 1)
        hub = start_hub(layout, folder / "jupyterhub.log")
        run = ClassRun(hub, passwords, folder, {f"provision, {exchange} exchange (environments kept)": provisioned})
        run.seconds["hub start"] = round(time.monotonic() - started - provisioned, 1)
        yield run
    finally:
        if hub is not None:
            hub.stop()
        for user in users:
            remove_user(user)


@pytest.fixture(scope="module")
def class_run(browser, artifacts: Path) -> Iterator[ClassRun]:
    if os.geteuid() != 0:
        pytest.skip("the classroom hub test creates system users and runs JupyterHub as root (CI runs as root)")
    folder = artifacts / "hub"
    folder.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TFCOURSE_HUB_DUE_DATES_EVERY", "5")  # the student-view service and each server look every 5 s
        users = {TEACHER: INSTRUCTORS, ADA: STUDENTS, BOB: STUDENTS, CY: STUDENTS, DAI: STUDENTS}
        with hub_class(users, folder) as run:
            set_due_dates(run)
            play_the_class(run, browser)
            yield run


def set_due_dates(run: ClassRun) -> None:
    """01 was due yesterday (written in UTC+08:00); A, B and C have an extension to next month, D one of two hours
    (still past); D's roster language is Chinese. Written as the instructor (course folder) and the roster script
    (the hub's state) would; the hub's student-view service publishes them."""
    now = datetime.now(UTC).astimezone(timezone(timedelta(hours=8))).replace(second=0, microsecond=0)
    due = now - timedelta(days=1)
    (run.course / "due_dates.csv").write_text(f"assignment,due\n{ASSIGNMENT},{due.isoformat()}\n")
    rows = "".join(f"{user},{ASSIGNMENT},{(due + timedelta(days=30)).isoformat()}\n" for user in (ADA, BOB, CY))
    (run.course / "extensions.csv").write_text(f"student,assignment,due\n{rows}{DAI},{ASSIGNMENT},+2h\n")
    save_languages(run.hub.layout.state, {DAI: "zh"})


def release_in_formgrader(run: ClassRun, page, teacher: str) -> Formgrader:
    """The instructor logs in (their server spawns) and releases 01 in formgrader; their formgrader page."""
    formgrader = Formgrader(page, run.hub.url, teacher)
    with run.step(f"login and spawn: {teacher}"):
        log_in(page, run.hub.url, teacher, run.passwords[teacher])
    with run.step("release 01 in formgrader"):
        formgrader.open()
        formgrader.click(ASSIGNMENT, "release", "Successfully released")
    return formgrader


def play_the_class(run: ClassRun, browser) -> None:
    contexts = {user: browser.new_context(viewport={"width": 1400, "height": 900}) for user in (TEACHER, ADA, BOB, DAI)}
    pages = {user: context.new_page() for user, context in contexts.items()}
    try:
        teacher = release_in_formgrader(run, pages[TEACHER], TEACHER)
        pages[TEACHER].screenshot(path=run.artifacts / "1-instructor-released.png")
        tabs = {user: AssignmentsTab(pages[user], run.artifacts) for user in (ADA, BOB)}
        for user in (ADA, BOB):
            with run.step(f"login and spawn: {user}"):
                log_in(pages[user], run.hub.url, user, run.passwords[user])
            with run.step(f"fetch: {user}"):
                tabs[user].open()
                tabs[user].fetch(ASSIGNMENT)
                tabs[user].screenshot(f"2-{user}-fetched")
                run.fetched_edition[user] = notebook_edition(Path(f"/home/{user}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"))
        answers = reference_answers(nbformat.read(source_notebook(ASSIGNMENT), as_version=4))
        notebook = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        with run.step(f"submit: {ADA} (every answer)"):
            write_home_file(run, ADA, notebook, answers_notebook(answers))
            tabs[ADA].submit(ASSIGNMENT)
            tabs[ADA].screenshot(f"3-{ADA}-submitted")
        with run.step(f"submit twice: {BOB} (nothing, then one answer)"):
            tabs[BOB].submit(ASSIGNMENT)
            time.sleep(1.1)  # nbgrader's submission timestamps are to the microsecond; keep them apart
            write_home_file(run, BOB, notebook, answers_notebook({ONE_ANSWER: answers[ONE_ANSWER]}))
            tabs[BOB].submit(ASSIGNMENT)
            tabs[BOB].screenshot(f"3-{BOB}-submitted-twice")
        with run.step(f"fetch and submit from a terminal: {CY} (patched torch.allclose)"):
            shell(run, CY, ["nbgrader", "fetch_assignment", ASSIGNMENT])
            patched = {**answers, "sdpa": PATCH + answers["sdpa"]}
            write_home_file(run, CY, notebook, answers_notebook(patched))
            shell(run, CY, ["nbgrader", "submit", ASSIGNMENT])
        with run.step(f"fetch (Chinese) and submit late in the Assignments tab: {DAI} (softmax over the queries)"):
            wrong_axis = answers["sdpa"].replace("softmax(dim=-1)", "softmax(dim=-2)")
            work_in_chinese(run, pages[DAI], {**answers, "sdpa": wrong_axis})
        with run.step("collect in formgrader"):
            teacher.open()
            teacher.click(ASSIGNMENT, "collect", "Successfully collected")
        with run.step("grade: python -m autograder grade"):
            shell(
                run, TEACHER, ["python", "-m", "autograder", "grade", "--assignment", ASSIGNMENT], cwd=str(run.course)
            )
        with run.step("feedback: python -m autograder feedback"):
            shell(run, TEACHER, ["python", "-m", "autograder", "feedback"], cwd=str(run.course))
            shell(run, TEACHER, ["python", "-m", "autograder", "export", "--output", "grades.csv"], cwd=str(run.course))
        with run.step("release feedback in formgrader"):
            teacher.open()
            teacher.click(ASSIGNMENT, "release-feedback", "Successfully released feedback")
            pages[TEACHER].screenshot(path=run.artifacts / "4-instructor-released-feedback.png")
        for user in (ADA, BOB):
            with run.step(f"fetch feedback: {user}"):
                tabs[user].refresh()
                tabs[user].fetch_feedback(ASSIGNMENT)
                tabs[user].screenshot(f"5-{user}-feedback-fetched")
                run.feedback_page[user] = open_feedback(run, pages[user], user)
        with run.step("due dates in each student's JupyterLab: A (English), D (Chinese)"):
            for user in (ADA, DAI):
                run.due_dates_page[user] = open_due_dates(run, pages[user], user)
        shell(run, CY, ["nbgrader", "fetch_feedback", ASSIGNMENT])
        shell(run, DAI, ["nbgrader", "fetch_feedback", ASSIGNMENT])
        fetched = sorted(Path(f"/home/{DAI}/{ASSIGNMENT}/feedback").glob(f"*/{ASSIGNMENT}.html"))
        run.feedback_page[DAI] = fetched[-1].read_text() if fetched else ""
        run.export = pd.read_csv(run.course / "grades.csv").set_index("student")
    finally:
        for context in contexts.values():
            context.close()
        (run.artifacts / "timings.json").write_text(json.dumps(run.seconds, indent=1))


def wait_for(ready, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(1)


def published_language(run: ClassRun, user: str) -> str | None:
    """The language the hub's student-view service published for ``user`` (read as root), if any yet."""
    try:
        return json.loads((run.hub.layout.prefix / VIEW_FOLDER / f"{user}.json").read_text())["language"]
    except (OSError, ValueError, KeyError):
        return None


def work_in_chinese(run: ClassRun, page, answers: dict[str, str]) -> None:
    """D, whose roster language is Chinese, fetches 01 in the Assignments tab and gets the Chinese notebook, runs code
    in that notebook's kernel, writes the answers into it and submits it in the tab after D's due date: the first
    press asks, the second hands it in."""
    notebook = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    fetched = Path(f"/home/{DAI}") / notebook
    wait_for(lambda: published_language(run, DAI) == "zh", "the hub to publish D's language")
    log_in(page, run.hub.url, DAI, run.passwords[DAI])
    tab = AssignmentsTab(page, run.artifacts)
    tab.open()
    tab.fetch(ASSIGNMENT)
    tab.screenshot(f"2-{DAI}-fetched-chinese")
    run.fetched_edition[DAI] = notebook_edition(fetched)
    run.chinese_kernel = run.hub.run_in_notebook(
        DAI, notebook, "from tfcourse.messages import tr\nprint(tr('{what}: passed', what='softmax'))\n"
    )
    filled = fill_answers(nbformat.read(fetched, as_version=4), answers)
    write_home_file(run, DAI, notebook, nbformat.writes(filled))
    tab.press("fetched", ASSIGNMENT, "Submit")
    dialog = page.locator(".jp-Dialog", has_text="Invalid Submission")
    dialog.wait_for(timeout=tab.timeout_ms)
    run.late_submit_asked = dialog.inner_text()
    dialog.locator("pre").evaluate("pre => { pre.scrollTop = pre.scrollHeight; }")  # the message ends the traceback
    tab.screenshot(f"3-{DAI}-late-submit-asked")
    dialog.get_by_role("button", name=re.compile(r"^\s*ok\s*$", re.IGNORECASE)).click()
    dialog.wait_for(state="detached", timeout=tab.timeout_ms)
    tab.submit(ASSIGNMENT)  # the second press, within the minutes the first gave: handed in, late
    tab.screenshot(f"3-{DAI}-submitted-late")


EXTENSION_SHOWN = {ADA: "(your extension)", DAI: "（你的延期）"}


def open_due_dates(run: ClassRun, page, user: str) -> str:
    """``~/DUE_DATES.md`` opened in the user's JupyterLab once it shows their extension; the text the page shows."""
    from playwright.sync_api import expect  # the browser tests skip without playwright

    path = Path(f"/home/{user}/DUE_DATES.md")
    wait_for(lambda: path.exists() and EXTENSION_SHOWN[user] in path.read_text(), f"{user}'s DUE_DATES.md")
    page.goto(f"{run.hub.url}/user/{user}/lab/tree/DUE_DATES.md")
    editor = page.locator(".jp-FileEditor .cm-content").first
    expect(editor).to_contain_text(EXTENSION_SHOWN[user], timeout=2 * 60_000)
    page.screenshot(path=run.artifacts / f"8-{user}-due-dates.png")
    return editor.inner_text()


def open_feedback(run: ClassRun, page, user: str) -> str:
    """The feedback page nbgrader fetched into the user's home, opened in their browser; its text."""
    found = run.hub.run_as(
        user, f"import glob; print(*glob.glob('{ASSIGNMENT}/feedback/*/{ASSIGNMENT}.html'), sep='\\n')"
    )
    path = found.strip().splitlines()[-1]  # feedback/<the submission's time, with spaces>/
    page.goto(f"{run.hub.url}/user/{user}/files/{urllib.parse.quote(path)}")
    page.screenshot(path=run.artifacts / f"6-{user}-feedback-page.png", full_page=False)
    return page.locator("body").inner_text()


def score_shown(text: str) -> str:
    line = next(line for line in text.splitlines() if "Autograded score" in line)
    return line.split(":", 1)[1].split("(")[0].strip()


def test_release_to_feedback_a_and_b_see_their_own_scores(class_run: ClassRun) -> None:
    export = class_run.export
    for user in (ADA, BOB):
        shown = score_shown(class_run.feedback_page[user])
        expected = f"{export.loc[user, 'autograded_score']:g} / {export.loc[user, 'autograded_max']:g}"
        assert shown == expected, f"{user}'s feedback page shows {shown}, the export says {expected}"
        assert (
            user in class_run.feedback_page[user] and ({ADA, BOB} - {user}).pop() not in class_run.feedback_page[user]
        )
    assert export.loc[ADA, "autograded_score"] == export.loc[ADA, "autograded_max"] > 0
    assert export.loc[ADA, "status"] == "graded"


def test_the_later_submission_counts(class_run: ClassRun) -> None:
    """B's first hand-in was the untouched release (0 points); the one collected and graded holds one answer."""
    bob = class_run.export.loc[BOB]
    assert 0 < bob["autograded_score"] < bob["autograded_max"]
    earned = [c.split(":")[1] for c in bob.index if c.startswith(f"{ASSIGNMENT}:") and not c.endswith(" why")
              and c.split(":")[1].startswith(ONE_ANSWER) and bob[c] > 0]
    assert earned, f"B's points do not come from {ONE_ANSWER}'s tests: {bob.to_dict()}"


def test_a_flagged_submission_s_feedback_is_held(class_run: ClassRun) -> None:
    cy = class_run.export.loc[CY]
    assert cy["status"] == "flagged" and cy["feedback"] == "held (flagged)"
    fetched = class_run.hub.run_as(CY, f"import glob; print(glob.glob('{ASSIGNMENT}/feedback/*'))")
    assert fetched.strip() == "[]", f"C fetched feedback that was held: {fetched}"


def test_submissions_are_marked_with_their_time(class_run: ClassRun) -> None:
    """The exchange's timestamp.txt reaches the export, and ``late by`` counts from each student's own due date:
    A, B and C handed in after 01's due date but within their extension, D after theirs."""
    export = class_run.export
    for user in (ADA, BOB, CY, DAI):
        assert export.loc[user, "submitted"], f"{user}'s submission time is missing from the export"
    assert [export.loc[user, "late by"] for user in (ADA, BOB, CY)] == ["on time"] * 3, export["late by"].to_dict()
    assert re.fullmatch(r"2[12] h( \d+ min)?", export.loc[DAI, "late by"]), export.loc[DAI, "late by"]  # a day - 2 h
    assert export.loc[DAI, "due"] < export.loc[ADA, "due"]  # each student's own due date


def test_a_chinese_student_fetches_the_chinese_notebook_in_the_assignments_tab(class_run: ClassRun) -> None:
    assert class_run.fetched_edition == {ADA: None, BOB: None, DAI: "zh"}, class_run.fetched_edition


def test_each_student_sees_their_due_date_and_extension_in_their_language(class_run: ClassRun) -> None:
    """The screenshots: build/browser-artifacts/hub/8-<student>-due-dates.png."""
    ada, dai = class_run.due_dates_page[ADA], class_run.due_dates_page[DAI]
    assert "Due dates" in ada and f"{ASSIGNMENT} |" in ada and "(your extension)" in ada, ada
    assert "截止日期" in dai and "（你的延期）" in dai and "(your extension)" not in dai, dai
    assert "截止" not in ada and "(UTC+08:00)" in ada and "(UTC+08:00)" in dai


def test_a_late_submit_asks_first_in_the_student_s_language(class_run: ClassRun) -> None:
    asked = class_run.late_submit_asked
    assert f"{ASSIGNMENT} 的截止时间是" in asked and "本次没有提交任何内容" in asked, asked
    assert "分钟内再次点击" in asked, asked
    assert class_run.export.loc[DAI, "status"] == "graded"  # the second press handed it in


def test_a_chinese_student_works_submits_and_gets_feedback_in_chinese(class_run: ClassRun, monkeypatch) -> None:
    """D's Chinese notebook: its kernel speaks Chinese, D is graded in the same class, the feedback is Chinese."""
    assert class_run.chinese_kernel.strip() == "softmax：通过", (
        f"a kernel of the Chinese notebook should speak Chinese, printed {class_run.chinese_kernel!r}"
    )
    dai, ada = class_run.export.loc[DAI], class_run.export.loc[ADA]
    assert dai["autograded_max"] == ada["autograded_max"] and 0 < dai["autograded_score"] < dai["autograded_max"]
    assert dai["status"] == "graded"
    page = class_run.feedback_page[DAI]
    assert '<html lang="zh">' in page and "自动评分" in page and "Autograded score" not in page, page[:600]
    monkeypatch.setenv("TFCOURSE_EDITION", "zh")
    expected = tr("each row of weights should sum to 1 over the keys (last axis); row sums are {sums}. "
                  "Is the softmax over the wrong axis? It must run over dim=-1.", sums="@").split("@")[0]
    assert expected in page, f"D's feedback should explain the failed softmax test in Chinese ({expected!r})"


def readable(run: ClassRun, user: str, path: str) -> str:
    """What ``user`` gets when listing or reading ``path`` from their own kernel: 'read' or the error's name."""
    code = (
        "import os\n"
        f"path = {path!r}\n"
        "try:\n"
        "    os.listdir(path) if os.path.isdir(path) else open(path, 'rb').read(1)\n"
        "    print('read')\n"
        "except OSError as error:\n"
        "    print(type(error).__name__)\n"
    )
    return run.hub.run_as(user, code).strip()


def test_nobody_reads_what_is_not_theirs(class_run: ClassRun) -> None:
    run, course, exchange = class_run, class_run.course, class_run.hub.layout.exchange
    inbound = exchange / "transformers-from-scratch" / "inbound"
    ada_submission = next(inbound.glob(f"{ADA}+{ASSIGNMENT}+*"))  # found as root; B cannot list to find it
    feedback = exchange / "transformers-from-scratch" / "feedback"
    forbidden = {
        "A's home": f"/home/{ADA}",
        "A's notebook": f"/home/{ADA}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb",
        "the exchange's inbound folder (to find A's submission)": str(inbound),
        "the exchange's feedback folder (to find A's feedback)": str(feedback),
        "the course folder": str(course),
        "solutions/": str(course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"),
        "the gradebook": str(course / "grading" / "gradebook.db"),
        "A's feedback in the course": str(course / "grading" / "feedback" / ADA / ASSIGNMENT),
        "A's due dates and extension, as the hub publishes them": str(exchange.parent / VIEW_FOLDER / f"{ADA}.json"),
        "the published views (to list whose there are)": str(run.hub.layout.prefix / VIEW_FOLDER),
    }
    seen = {what: readable(run, BOB, path) for what, path in forbidden.items()}
    (run.artifacts / "permissions.json").write_text(json.dumps(seen, indent=1))
    assert all(result == "PermissionError" for result in seen.values()), seen
    # A's submission folder is named <student>+<assignment>+<timestamp>+<random>: without a listing, B cannot name it.
    guessed = readable(run, BOB, str(inbound / f"{ADA}+{ASSIGNMENT}"))
    assert guessed in {"PermissionError", "FileNotFoundError"} and ada_submission.name != f"{ADA}+{ASSIGNMENT}"
    assert readable(run, BOB, f"/home/{BOB}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb") == "read"  # the check can pass
    assert readable(run, BOB, str(run.hub.layout.prefix / VIEW_FOLDER / f"{BOB}.json")) == "read"
    # Nor does the hub's log (every server's output) give the name away.
    assert ada_submission.name.rsplit("+", 1)[1] not in run.hub.log.read_text(errors="replace")


def test_a_student_cannot_open_formgrader(class_run: ClassRun, browser) -> None:
    context = browser.new_context()
    page = context.new_page()
    try:
        log_in(page, class_run.hub.url, ADA, class_run.passwords[ADA])
        page.locator(".lm-MenuBar-item", has_text="Nbgrader").click()
        items = page.locator(".lm-Menu-item").all_inner_texts()
        assert not any("Formgrader" in item or "Course List" in item for item in items), items
        assert any("Assignment List" in item for item in items), items  # the menu was read
        response = page.goto(f"{class_run.hub.url}/user/{ADA}/formgrader")
        page.screenshot(path=class_run.artifacts / "7-student-formgrader.png")
        assert response.status == 404, f"formgrader answered {response.status} to a student"
    finally:
        context.close()
    with pytest.raises(KernelError, match="Permission"):
        class_run.hub.run_as(ADA, f"open({str(class_run.course / 'grading' / 'gradebook.db')!r}).read()")


def test_the_steps_were_timed(class_run: ClassRun) -> None:
    assert {"hub start", "grade: python -m autograder grade"} <= set(class_run.seconds)


def launch(url: str, user: str, secret: str = LTI_SECRET) -> tuple[int, Message]:
    params = {
        "lti_message_type": "basic-lti-launch-request",
        "lti_version": "LTI-1p0",
        "resource_link_id": "transformers-week-1",
        "context_id": "course-42",
        "roles": "Learner",
        "user_id": "a6d6b8c1e0f3",  # the LMS's opaque id: the hub uses the login id below instead
        "custom_canvas_user_login_id": user,
    }
    return post_launch(url, signed_launch(url, LTI_KEY, secret, params))


def logged_in(headers: Message) -> bool:
    """The hub's answer sets its login cookie."""
    return "jupyterhub-hub-login=" in " ".join(headers.get_all("Set-Cookie") or [])


def test_an_lms_link_logs_the_student_in_under_the_roster_id(class_run: ClassRun, artifacts: Path) -> None:
    """LTI 1.1: a launch signed with the course's secret logs in the roster's student; others are refused."""
    state = class_run.hub.layout.prefix / "state-lti"
    state.mkdir(mode=0o700, exist_ok=True)
    settings = {"consumers": {LTI_KEY: LTI_SECRET}, "username_key": "custom_canvas_user_login_id"}
    (state / "lti11.json").write_text(json.dumps(settings))
    hub = start_hub(class_run.hub.layout, artifacts / "hub" / "jupyterhub-lti.log", auth="lti11", state=state)
    try:
        url = f"{hub.url}/hub/lti/launch"
        status, headers = launch(url, BOB)
        assert status == 302 and logged_in(headers), (status, dict(headers))
        assert hub.request(f"hub/api/users/{BOB}")["name"] == BOB  # the launch made the user: the roster's id
        status, headers = launch(url, BOB, secret="not-the-secret")
        assert status == 401 and not logged_in(headers), (status, dict(headers))
        status, headers = launch(url, "tfhub-stranger")  # signed, but not in the course's groups
        assert not logged_in(headers), (status, dict(headers))
        with pytest.raises(urllib.error.HTTPError, match="404"):
            hub.request("hub/api/users/tfhub-stranger")
    finally:
        hub.stop()


def kernel_url(hub: Hub, user: str, kernel: str) -> str:
    return f"ws://127.0.0.1:{hub.port}/user/{user}/api/kernels/{kernel}/channels"


def until_the_kernel_dies(hub: Hub, user: str, token: str, kernel: str, code: str, timeout: float = 180) -> str:
    """Run ``code`` in the kernel; what its server said of it: "restarting" (it died), "dead", or "idle" (it lived)."""
    authorization = [f"Authorization: token {token}"]
    deadline = time.monotonic() + timeout
    connection = websocket.create_connection(kernel_url(hub, user, kernel), header=authorization, timeout=timeout)
    try:
        msg_id = send_execute(connection, code)
        for reply in messages(connection, deadline):
            if reply["header"]["msg_type"] != "status":
                continue
            state = reply["content"]["execution_state"]
            if state in ("restarting", "dead") or (state == "idle" and reply["parent_header"].get("msg_id") == msg_id):
                return state
        raise AssertionError(f"the server closed {user}'s kernel channel before the kernel went idle or died")
    finally:
        connection.close()


def until_the_kernel_answers(hub: Hub, user: str, token: str, kernel: str, timeout: float) -> None:
    """As JupyterLab does once a kernel restarted: a new channel, a kernel_info request, and wait for its reply.

    A kernel killed mid-cell stays "busy" in its server's books until the new kernel's first status message, and
    while it is, the server skips the check (its "nudge") that a new channel's subscriptions are in place before
    the channel opens (jupyter_server 2.21: "Nudge: not nudging busy kernel" in its debug log right after an
    out-of-memory restart); the kernel_info reply comes on the shell channel, which needs no subscription.
    jupyter_client restarts on the dead kernel's ports; when another process took one meanwhile, the kernel was
    dropped or hung alive and silent (tests/classroom/test_kernel_ports.py): student servers restart it on new
    ports, and wait for it to answer (classroom/kernel_ports.py). A restart that still fails fails here with the
    hub's log.
    """
    deadline, authorization = time.monotonic() + timeout, [f"Authorization: token {token}"]
    try:
        connection = websocket.create_connection(kernel_url(hub, user, kernel), header=authorization, timeout=timeout)
    except websocket.WebSocketException as error:  # the server refused the channel: the kernel is gone
        raise AssertionError(f"{user}'s kernel after its restart: {error!r}\n{hub.log_tail()}") from None
    try:
        msg_id = send_request(connection, "kernel_info_request", {})
        for reply in messages(connection, deadline):
            if reply["header"]["msg_type"] == "kernel_info_reply" and reply["parent_header"].get("msg_id") == msg_id:
                return
        raise AssertionError(f"the server closed {user}'s kernel channel before the kernel answered")
    except TimeoutError:
        silent = f"{user}'s kernel did not answer in {timeout} s after its restart"
        raise AssertionError(f"{silent}:\n{hub.log_tail()}") from None
    finally:
        connection.close()


def limits_line(hub: Hub) -> str:
    """The line the hub logged at start about per-student limits (classroom/limits.py)."""
    lines = [line for line in hub.log.read_text(errors="replace").splitlines() if "per-student limits" in line]
    return lines[0] if lines else "the hub logged no line about per-student limits"


# In a kernel of B's, a thread: each of the given ports (A's kernel's) bound and held the moment it is free, as a
# process of another student's that watches them would (``/proc/net/tcp`` shows every user's); ``taken`` lists them.
# SO_REUSEADDR, as ZeroMQ binds: the dead kernel's closed connections keep its ports in TIME_WAIT for a minute.
TAKE_PORTS_WHEN_FREE = """\
import socket, threading, time
taken, takers = [], []
def take_when_free(ports, seconds):
    deadline, left = time.monotonic() + seconds, set(ports)
    while left and time.monotonic() < deadline:
        for port in sorted(left):
            taker = socket.socket()
            taker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                taker.bind(("127.0.0.1", port))
                taker.listen(1)
            except OSError:
                taker.close()
                continue
            takers.append(taker)
            taken.append(port)
            left.discard(port)
        time.sleep(0.005)
threading.Thread(target=take_when_free, args=({ports!r}, {seconds}), daemon=True).start()
"""
NEXT_CELL = 90  # s from a kernel's death to its answer: the restarter's 3 s, a kernel's start, and a lost race's 60


def kernel_ports(user: str, kernel: str) -> list[int]:
    """The ports of ``user``'s kernel ``kernel``: those of the connection file its command names (read as root)."""
    for process in processes_of(user):
        try:
            command = process.cmdline()
        except psutil.Error:
            continue
        files = [part for part in command if part.endswith(f"kernel-{kernel}.json")]
        if files:
            info = json.loads(Path(files[0]).read_text())
            return sorted(info[name] for name in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"))
    raise AssertionError(f"no process of {user}'s runs the kernel {kernel}")


def test_past_the_memory_limit_a_student_loses_only_their_own_kernel(class_run: ClassRun) -> None:
    """make hub's default limits (2 GiB, 1 CPU a student): A's kernel allocates 3 GiB and is stopped; a kernel of B's
    takes every port A's kernel had the moment each is free; A's next cell, sent with A's own token, runs within
    NEXT_CELL seconds of the kill and says why, and so does the hub's log; B's kernel keeps its variables, A's server
    and the hub run on."""
    hub = class_run.hub
    if "limits are off" in limits_line(hub) or "per-student limits:" not in limits_line(hub):
        pytest.skip(limits_line(hub))
    started = time.monotonic()
    ada_token = hub.request(f"hub/api/users/{ADA}/tokens", method="POST", body={"note": "memory limit"})["token"]
    bob = hub.request(f"user/{BOB}/api/kernels", method="POST", body={"name": "python3"})["id"]
    ada = hub.request(f"user/{ADA}/api/kernels", method="POST", body={"name": "python3"})["id"]
    try:
        execute(kernel_url(hub, BOB, bob), hub.token, "kept = list(range(10))", timeout=120)
        ports = kernel_ports(ADA, ada)
        execute(kernel_url(hub, BOB, bob), hub.token, TAKE_PORTS_WHEN_FREE.format(ports=ports, seconds=300), 60)
        state = until_the_kernel_dies(hub, ADA, ada_token, ada, "chunks = [b'x' * 2**26 for _ in range(48)]  # 3 GiB")
        assert state == "restarting", f"A's kernel allocating 3 GiB past a 2 GiB limit ended {state!r}"
        died = time.monotonic()
        until_the_kernel_answers(hub, ADA, ada_token, ada, timeout=NEXT_CELL)
        left = max(1.0, died + NEXT_CELL - time.monotonic())
        told = execute(kernel_url(hub, ADA, ada), ada_token, "print('after')", timeout=left)
        answered = round(time.monotonic() - died, 1)
        assert "A kernel of yours was stopped by the machine" in told and "2.0 GiB" in told, f"A was not told: {told!r}"
        assert "after" in told.splitlines(), told
        taken = execute(kernel_url(hub, BOB, bob), hub.token, "print(sorted(taken))", timeout=60)
        assert taken == f"{ports}\n", (
            f"B's kernel took {taken.strip()} of the ports A's killed kernel had, {ports}: A's restart on new ports "
            "was not put to the test (another process holds one, or B's thread failed)"
        )
        assert execute(kernel_url(hub, BOB, bob), hub.token, "print(sum(kept))", timeout=120) == "45\n"
        assert hub.process.poll() is None and hub.request("hub/api/")["version"]
        assert hub.user(ADA)["server"], "A's server should outlive A's kernel (the largest process is stopped)"
        deadline = time.monotonic() + 30  # the spawner reads the kill count at each poll, every 10 s
        while f"{ADA}'s processes went past their memory limit" not in hub.log_tail(20000):
            assert time.monotonic() < deadline, f"the hub's log never said why A's kernel died:\n{hub.log_tail()}"
            time.sleep(1)
    finally:
        for user, kernel in ((BOB, bob), (ADA, ada)):
            hub.request(f"user/{user}/api/kernels/{kernel}", method="DELETE")
    class_run.seconds[f"memory limit: A's kernel stopped, B's kept; A's next cell {answered} s after the kill"] = round(
        time.monotonic() - started, 1
    )


def test_an_idle_server_is_culled_and_the_student_s_work_kept(class_run: ClassRun, artifacts: Path, monkeypatch):
    """make hub's culling at test speed (CULL_IDLE=20, KERNEL_CULL_IDLE=3), on a second hub over the same layout: an
    unused kernel of C's is shut down by C's server, then C's idle server is stopped by the culler; C's file stays."""
    started = time.monotonic()
    class_run.hub.request(f"hub/api/users/{CY}/server", method="DELETE")  # C's server on the class's hub: one a student
    wait_for(lambda: not any(class_run.hub.user(CY)[key] for key in ("server", "pending")), f"{CY}'s server to stop")
    monkeypatch.setenv("TFCOURSE_HUB_CULL_IDLE", "20")
    monkeypatch.setenv("TFCOURSE_HUB_KERNEL_CULL_IDLE", "3")
    state = class_run.hub.layout.prefix / "state-cull"
    shutil.rmtree(state, ignore_errors=True)
    hub = start_hub(class_run.hub.layout, artifacts / "hub" / "jupyterhub-cull.log", state=state)
    seconds = {}
    try:
        hub.run_as(CY, "import pathlib\npathlib.Path.home().joinpath('before-the-break.txt').write_text('kept')\n")
        spawned = time.monotonic()
        kernel = hub.request(f"user/{CY}/api/kernels", method="POST", body={"name": "python3"})["id"]
        while True:
            try:
                running = [k["id"] for k in hub.request(f"user/{CY}/api/kernels")]
            except urllib.error.HTTPError as error:  # 424: the server is gone
                raise AssertionError(f"C's server stopped (HTTP {error.code}) before it shut down C's idle kernel "
                                     "(KERNEL_CULL_IDLE=3): are the servers' kernel culling settings given?") from None
            if kernel not in running:
                break
            assert time.monotonic() - spawned < 60, "C's idle kernel was not culled in 60 s (KERNEL_CULL_IDLE=3)"
            time.sleep(1)
        seconds["kernel culled"] = round(time.monotonic() - spawned, 1)
        while hub.user(CY)["server"] or hub.user(CY)["pending"]:
            assert time.monotonic() - spawned < 120, f"C's idle server was not culled in 120 s:\n{hub.log_tail()}"
            time.sleep(1)
        seconds["server culled"] = round(time.monotonic() - spawned, 1)
        assert f"Culling server {CY}" in hub.log_tail(20000), hub.log_tail()
        assert Path(f"/home/{CY}/before-the-break.txt").read_text() == "kept"
        assert not StudentCgroups.under_this_process().of(CY)[0].exists(), "C's cgroup outlived C's server"
    finally:
        hub.stop()
    class_run.seconds["idle culling: " + ", ".join(f"{k} after {v} s" for k, v in seconds.items())] = round(
        time.monotonic() - started, 1
    )
    (artifacts / "hub" / "timings.json").write_text(json.dumps(class_run.seconds, indent=1))


# In a kernel of B's: a variable, an edit to B's notebook, and a thread that hands 01 in with nbgrader's submit once
# the hub's own API refuses connections (the hub is down), then leaves a mark in B's home for the test to see.
HOLD_AND_HAND_IN_WHILE_THE_HUB_IS_DOWN = """\
import os, pathlib, socket, subprocess, threading, time
import nbformat
held = 'set before the restart'
notebook = pathlib.Path.home() / {assignment!r} / ({assignment!r} + '.ipynb')
edited = nbformat.read(notebook, as_version=4)
edited.cells.append(nbformat.v4.new_markdown_cell('Written before the hub restarted.'))
nbformat.write(edited, notebook)  # a change: the course's submit refuses one identical to the last hand-in
def hand_in_while_the_hub_is_down():
    global handed_in
    while True:
        try:
            socket.create_connection(('127.0.0.1', {hub_api_port}), timeout=1).close()
        except OSError:
            break
        time.sleep(0.2)
    done = subprocess.run(['nbgrader', 'submit', {assignment!r}], cwd=os.path.expanduser('~'), capture_output=True,
                          text=True)
    handed_in = done.stdout + done.stderr + f'exit {{done.returncode}}'
    pathlib.Path.home().joinpath({mark!r}).write_text(handed_in)
threading.Thread(target=hand_in_while_the_hub_is_down, daemon=True).start()
"""
HANDED_IN_MARK = ".handed-in-while-the-hub-was-down"


def processes_of(user: str) -> list[psutil.Process]:
    return [process for process in psutil.process_iter(["username"]) if process.info["username"] == user]


def execute_until_routed(hub: Hub, user: str, kernel: str, code: str, timeout: float = 60) -> str:
    """``code`` in the kernel once the proxy routes to its server again (the hub restores routes after its API)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return execute(kernel_url(hub, user, kernel), hub.token, code, timeout=60)
        except (websocket.WebSocketException, OSError) as error:
            assert time.monotonic() < deadline, f"{user}'s kernel unreachable through the proxy: {error!r}"
            time.sleep(1)


def test_the_hub_and_proxy_restarted_mid_class_keep_servers_kernels_and_hand_ins(class_run: ClassRun) -> None:
    """The hub's process is stopped (SIGTERM) while B's kernel holds a variable; the proxy it leaves running still
    reaches that kernel; a thread in it hands 01 in while the hub is down; the proxy is ended; both start again on
    the same state and ports. B's kernel still holds the variable (through the new proxy), and the hand-in made
    while the hub was away is in the exchange and collected, byte for byte."""
    hub, started = class_run.hub, time.monotonic()
    inbound = hub.layout.exchange / "transformers-from-scratch" / "inbound"
    before = set(inbound.glob(f"{BOB}+{ASSIGNMENT}+*"))
    mark = Path(f"/home/{BOB}") / HANDED_IN_MARK
    mark.unlink(missing_ok=True)
    hub.start_server(BOB)
    kernel = hub.request(f"user/{BOB}/api/kernels", method="POST", body={"name": "python3"})["id"]
    code = HOLD_AND_HAND_IN_WHILE_THE_HUB_IS_DOWN.format(hub_api_port=hub.port + 1, assignment=ASSIGNMENT,
                                                         mark=HANDED_IN_MARK)
    execute(kernel_url(hub, BOB, kernel), hub.token, code, timeout=120)
    hub.stop_process()
    down = time.monotonic()
    try:
        assert processes_of(BOB), "B's server ended with the hub: is JupyterHub.cleanup_servers False?"
        during = execute(kernel_url(hub, BOB, kernel), hub.token, "print(held)", timeout=60)
        assert during == "set before the restart\n", f"through the proxy left running, B's kernel printed {during!r}"
        while not mark.exists():
            assert processes_of(BOB), "B's server ended while the hub was down: nothing kept it running"
            assert time.monotonic() - down < 120, "B's kernel did not hand in within 120 s of the hub going down"
            time.sleep(0.5)
        hub.stop_proxy()
    finally:
        hub.relaunch()
    away = round(time.monotonic() - down, 1)
    try:
        kept = execute_until_routed(hub, BOB, kernel, "print(held)\nprint(handed_in)")
    finally:
        hub.request(f"user/{BOB}/api/kernels/{kernel}", method="DELETE")
    assert kept.startswith("set before the restart\n"), f"after the restart B's kernel printed {kept!r}"
    assert "Submitted as" in kept and kept.rstrip().endswith("exit 0"), f"B's hand-in while the hub was down: {kept}"
    new = set(inbound.glob(f"{BOB}+{ASSIGNMENT}+*")) - before
    assert len(new) == 1, f"expected one new hand-in of B's in the exchange, found {len(new)}"
    collect = ["nbgrader", "collect", "--update", f"--student={BOB}", ASSIGNMENT]
    shell(class_run, TEACHER, collect, cwd=str(class_run.course))
    collected = class_run.course / "grading" / "submitted" / BOB / ASSIGNMENT
    home = Path(f"/home/{BOB}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb").read_bytes()  # with the edit: only the new hand-in
    assert (collected / f"{ASSIGNMENT}.ipynb").read_bytes() == home, "the collected notebook is not B's latest"
    class_run.seconds[f"hub and proxy restart (hub away {away} s), hand-in kept and collected"] = round(
        time.monotonic() - started, 1
    )
    (class_run.artifacts / "timings.json").write_text(json.dumps(class_run.seconds, indent=1))
