"""The course on a real JupyterHub: release, fetch, submit, collect, grade, feedback, fetch feedback.

JupyterHub runs with the course's own configuration (``classroom/``) on loopback, each server
as its user's system account. In Chromium: the instructor releases 01 from formgrader; students
A and B log in and fetch it in JupyterLab's Assignments tab; A hands in every answer (the
reference's), B the untouched notebook and then one answer (the later one counts); C, from a
terminal, hands in answers that patch ``torch.allclose``. The instructor collects in formgrader,
grades with ``python -m autograder grade`` and writes feedback with ``python -m autograder
feedback`` in a kernel of their own server, and releases the feedback from formgrader; A and B
fetch it in the Assignments tab and see their own scores, and C's (flagged, held) never comes.
D works in the Chinese edition: from a terminal D fetches 01, copies the Chinese notebook from the
hub's runtime over it, runs code in that notebook's kernel (which speaks Chinese), hands in an answer
with the softmax over the wrong axis, and fetches feedback in Chinese, graded in the same class.
From inside each student's own server (a kernel running as that user), nobody reads what is not
theirs. Screenshots of each step go to ``build/browser-artifacts/hub/``; the steps' seconds to
``timings.json`` beside them.

It creates system users and runs the hub as root (LocalProcessSpawner): elsewhere it skips.
"""

import json
import os
import secrets
import time
import urllib.error
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.settings import release_notebook, source_notebook
from classroom.layout import INSTRUCTORS, STUDENTS
from classroom.provision import provision
from classroom.system_users import ensure_user, remove_user, set_password
from tests.browser.assignments_page import AssignmentsTab, Formgrader, log_in
from tests.browser.hub import Hub, KernelError, fresh_layout, start_hub
from tests.browser.lti import post_launch, signed_launch
from tfcourse.messages import tr

pytestmark = pytest.mark.slow
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
    code = (
        "import os, subprocess, sys\n"
        f"done = subprocess.run({command!r}, cwd=os.path.expanduser({cwd!r}), capture_output=True, text=True)\n"
        "print(done.stdout + done.stderr)\n"
        "sys.exit(done.returncode) if done.returncode else None\n"
    )
    return run.hub.run_as(user, code, timeout=900)


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
    with hub_class({TEACHER: INSTRUCTORS, ADA: STUDENTS, BOB: STUDENTS, CY: STUDENTS, DAI: STUDENTS}, folder) as run:
        play_the_class(run, browser)
        yield run


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
    contexts = {user: browser.new_context(viewport={"width": 1400, "height": 900}) for user in (TEACHER, ADA, BOB)}
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
        with run.step(f"fetch, switch to Chinese, work and submit from a terminal: {DAI} (softmax over the queries)"):
            work_in_chinese(run, {**answers, "sdpa": answers["sdpa"].replace("softmax(dim=-1)", "softmax(dim=-2)")})
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
        shell(run, CY, ["nbgrader", "fetch_feedback", ASSIGNMENT])
        shell(run, DAI, ["nbgrader", "fetch_feedback", ASSIGNMENT])
        fetched = sorted(Path(f"/home/{DAI}/{ASSIGNMENT}/feedback").glob(f"*/{ASSIGNMENT}.html"))
        run.feedback_page[DAI] = fetched[-1].read_text() if fetched else ""
        run.export = pd.read_csv(run.course / "grades.csv").set_index("student")
    finally:
        for context in contexts.values():
            context.close()
        (run.artifacts / "timings.json").write_text(json.dumps(run.seconds, indent=1))


def work_in_chinese(run: ClassRun, answers: dict[str, str]) -> None:
    """D fetches 01, puts the Chinese notebook of the hub's runtime in its place, runs code in that notebook's
    kernel, writes the answers into it and hands it in: all as D, from D's own server."""
    notebook = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    chinese = run.hub.layout.runtime / "notebooks_zh" / notebook
    shell(run, DAI, ["nbgrader", "fetch_assignment", ASSIGNMENT])
    shell(run, DAI, ["cp", str(chinese), notebook])
    run.chinese_kernel = run.hub.run_in_notebook(
        DAI, notebook, "from tfcourse.messages import tr\nprint(tr('{what}: passed', what='softmax'))\n"
    )
    filled = fill_answers(nbformat.read(chinese, as_version=4), answers)
    write_home_file(run, DAI, notebook, nbformat.writes(filled))
    shell(run, DAI, ["nbgrader", "submit", ASSIGNMENT])


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
              and c.split(":")[1].startswith(ONE_ANSWER) and bob[c] > 0]  # fmt: skip
    assert earned, f"B's points do not come from {ONE_ANSWER}'s tests: {bob.to_dict()}"


def test_a_flagged_submission_s_feedback_is_held(class_run: ClassRun) -> None:
    cy = class_run.export.loc[CY]
    assert cy["status"] == "flagged" and cy["feedback"] == "held (flagged)"
    fetched = class_run.hub.run_as(CY, f"import glob; print(glob.glob('{ASSIGNMENT}/feedback/*'))")
    assert fetched.strip() == "[]", f"C fetched feedback that was held: {fetched}"


def test_submissions_are_marked_with_their_time(class_run: ClassRun) -> None:
    """The exchange's timestamp.txt reaches the export (no due date is set: none is late)."""
    for user in (ADA, BOB, CY, DAI):
        assert class_run.export.loc[user, "submitted"], f"{user}'s submission time is missing from the export"


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
    }
    seen = {what: readable(run, BOB, path) for what, path in forbidden.items()}
    (run.artifacts / "permissions.json").write_text(json.dumps(seen, indent=1))
    assert all(result == "PermissionError" for result in seen.values()), seen
    # A's submission folder is named <student>+<assignment>+<timestamp>+<random>: without a listing, B cannot name it.
    guessed = readable(run, BOB, str(inbound / f"{ADA}+{ASSIGNMENT}"))
    assert guessed in {"PermissionError", "FileNotFoundError"} and ada_submission.name != f"{ADA}+{ASSIGNMENT}"
    assert readable(run, BOB, f"/home/{BOB}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb") == "read"  # the check can pass
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
