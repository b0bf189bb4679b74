"""The class on the hub with the ngshare exchange (``make hub EXCHANGE=ngshare``), end to end in Chromium.

ngshare runs as a service the hub manages, as its own system account; every user's nbgrader
talks to it with their own hub token (``ngshare_exchange``). The instructor creates the course in
ngshare and releases 01 in formgrader; Ada logs in, fetches it in the Assignments tab and hands
in every answer; the instructor collects in formgrader, grades and writes feedback with
``python -m autograder`` and releases it in formgrader; Ada fetches it and sees the export's
score. Mal, from a kernel of their own server (as that user), tries what the filesystem
exchange's attack test tries: hand in as Ada, claim a time, fetch Ada's feedback, overwrite the
release, hand in a link to the solution. Each must fail, and Ada's grade, feedback and fetched
notebook be what they should. Mal then uploads, with their own token, straight to ngshare's API, a
submission with a folder where nbgrader reads a file (``timestamp.txt/x``), which made
ngshare_exchange's collect fail for everyone at every try: the instructor's ``nbgrader collect``,
in a terminal of the course folder, collects Ada and Mal's earlier hand-in and lists the refusal,
and formgrader's Collect after it succeeds. While the hub runs: ngshare listens on the loopback
only, and Mal's token is in no line of the hub's output (ngshare's included).

Root only (system users, a hub running servers as them): elsewhere it skips and says why.
"""

import collections
import concurrent.futures
import http.client
import ipaddress
import json
import os
import pwd
import shutil
import socket
import sqlite3
import statistics
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pandas as pd
import psutil
import pytest

from autograder.course.deadlines import submitted_at
from autograder.course.notebooks import reference_answers
from autograder.course.settings import HubSettings, source_notebook
from autograder.pipeline.exchange.exchange_collect import SafeExchangeCollect
from classroom.cgroups import oom_kills, own_cgroup
from classroom.layout import COURSE_ID, INSTRUCTORS, STUDENTS
from classroom.limits import SERVICES
from classroom.provision import NGSHARE_USER
from classroom.roster import save_languages
from classroom.student_submit import MESSAGE_NOT_CONFIRMED
from classroom.student_view import VIEW_FOLDER, VIEW_VARIABLE
from classroom.system_users import ensure_user, remove_user
from testbed.hub import HUB_MODULE_TIMEOUT
from tests.browser.assignments_page import AssignmentsTab, log_in
from tests.browser.test_classroom_hub import (
    ClassRun,
    answers_notebook,
    hub_class,
    open_feedback,
    published_language,
    release_in_formgrader,
    score_shown,
    shell,
    wait_for,
)
from tests.support.forked_submit import submit_in_child
from tfcourse.language import notebook_edition

pytestmark = [pytest.mark.slow, pytest.mark.timeout(HUB_MODULE_TIMEOUT)]
ASSIGNMENT = "01_attention"
TEACHER, ADA, MAL = "tfng-teacher", "tfng-ada", "tfng-mal"
FORGED = "2000-01-01 00:00:00.000000 UTC"
NAMING_ADA = SafeExchangeCollect.max_handins.default_value + 1  # uploads by Mal that name Ada


@pytest.fixture(scope="module")
def ngshare_run(browser, artifacts: Path) -> Iterator[ClassRun]:
    if os.geteuid() != 0:
        pytest.skip("the ngshare hub test creates system users and runs JupyterHub as root (CI runs as root)")
    folder = artifacts / "hub-ngshare"
    folder.mkdir(parents=True, exist_ok=True)
    with hub_class({TEACHER: INSTRUCTORS, ADA: STUDENTS, MAL: STUDENTS}, folder, exchange="ngshare") as run:
        save_languages(run.hub.layout.state, {MAL: "zh"})  # the roster's language column, as make hub-students keeps it
        play(run, browser)
        yield run


def play(run: ClassRun, browser) -> None:
    course = str(run.course)
    with run.step("course in ngshare: create, add students"):
        created = shell_output(run, TEACHER, ["ngshare-course-management", "create_course", COURSE_ID, TEACHER])
        assert "Successfully created" in created, f"{created}\n{run.hub.log_tail()}"
        for student in (ADA, MAL):
            command = ["ngshare-course-management", "add_student", COURSE_ID, student, "--no-gb"]
            added = shell_output(run, TEACHER, command)
            assert "Successfully added" in added, added
    contexts = {user: browser.new_context(viewport={"width": 1400, "height": 900}) for user in (TEACHER, ADA)}
    pages = {user: context.new_page() for user, context in contexts.items()}
    try:
        teacher = release_in_formgrader(run, pages[TEACHER], TEACHER)
        tab = AssignmentsTab(pages[ADA], run.artifacts)
        with run.step(f"login, fetch: {ADA}"):
            log_in(pages[ADA], run.hub.url, ADA, run.passwords[ADA])
            tab.open()
            tab.fetch(ASSIGNMENT)
        fetched = run.hub.run_as(ADA, f"print(open('{ASSIGNMENT}/{ASSIGNMENT}.ipynb').read())")
        (run.artifacts / "ada-fetched.ipynb").write_text(fetched[:-1])  # print's newline
        answers = reference_answers(nbformat.read(source_notebook(ASSIGNMENT), as_version=4))
        with run.step(f"submit: {ADA} (every answer)"):
            write(run, ADA, f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb", answers_notebook(answers))
            tab.submit(ASSIGNMENT)
            tab.screenshot("ngshare-1-ada-submitted")
        with run.step(f"uploads naming {ADA}, more than collect looks at: {MAL}"):
            upload_naming_ada(run)
        with run.step(f"attacks: {MAL}"):
            attack(run)
        with run.step(f"a folder where nbgrader reads a file, uploaded to ngshare: {MAL}"):
            upload_malformed(run)
        with run.step("collect in the instructor's terminal: nbgrader collect"):
            collected = shell_output(run, TEACHER, ["nbgrader", "collect", ASSIGNMENT], cwd=course)
            (run.artifacts / "teacher-nbgrader-collect.txt").write_text(collected)
            run.feedback_page["teacher collect"] = collected
        with run.step("collect in formgrader"):
            teacher.open()
            teacher.click(ASSIGNMENT, "collect", "Successfully collected")
        with run.step("grade, feedback, export"):
            for step in (["grade", "--assignment", ASSIGNMENT], ["feedback"], ["export", "--output", "grades.csv"]):
                shell(run, TEACHER, ["python", "-m", "autograder", *step], cwd=course)
        with run.step("release feedback in formgrader"):
            teacher.open()
            teacher.click(ASSIGNMENT, "release-feedback", "Successfully released feedback")
        with run.step(f"fetch feedback: {ADA}"):
            tab.refresh()
            tab.fetch_feedback(ASSIGNMENT)
            run.feedback_page[ADA] = open_feedback(run, pages[ADA], ADA)
        with run.step(f"fetch feedback as {ADA}: {MAL}"):
            mal_tried = shell_output(run, MAL, ["nbgrader", "fetch_feedback", ASSIGNMENT, f"--student={ADA}"])
            (run.artifacts / "mal-fetch-feedback.txt").write_text(mal_tried)
            # Whose pages Mal holds now: [names Ada, names Mal] per page (Mal's own graded hand-in has one).
            pattern = f"{ASSIGNMENT}/feedback/*/*.html"
            names = (f"import glob, json\ntexts = [open(p).read() for p in glob.glob({pattern!r})]\n"
                     f"print(json.dumps([[{ADA!r} in t, {MAL!r} in t] for t in texts]))")
            (run.artifacts / "mal-feedback-pages.json").write_text(run.hub.run_as(MAL, names))
        run.export = pd.read_csv(run.course / "grades.csv").set_index("student")
    finally:
        for context in contexts.values():
            context.close()
        (run.artifacts / "timings.json").write_text(json.dumps(run.seconds, indent=1))


def write(run: ClassRun, user: str, relative: str, text: str) -> None:
    run.hub.run_as(user, f"import pathlib\npathlib.Path.home().joinpath({relative!r}).write_text({text!r})\n")


def shell_output(run: ClassRun, user: str, command: list[str], cwd: str = "~") -> str:
    """A command in ``user``'s kernel; its output whatever its exit status (ngshare-exchange exits 0 on failures)."""
    code = (
        "import os, subprocess\n"
        f"done = subprocess.run({command!r}, cwd=os.path.expanduser({cwd!r}), capture_output=True, text=True)\n"
        "print(done.stdout + done.stderr + f'exit {done.returncode}')\n"
    )
    return run.hub.run_as(user, code, timeout=300)


def attack(run: ClassRun) -> None:
    """Mal: fetch, then hand in as Ada, with a claimed time, a link to the solution; overwrite the release."""
    tried: dict[str, str] = {}
    wait_for(lambda: published_language(run, MAL) == "zh", "the hub to publish Mal's language")
    tried["fetch"] = shell_output(run, MAL, ["nbgrader", "fetch_assignment", ASSIGNMENT])
    for student in (ADA, MAL):
        folder = Path(f"/home/{student}/{ASSIGNMENT}")
        run.fetched_edition[student] = notebook_edition(folder / f"{ASSIGNMENT}.ipynb")
        run.feedback_page[f"{student} fetched"] = json.dumps(sorted(path.name for path in folder.iterdir()))
    write(run, MAL, f"{ASSIGNMENT}/timestamp.txt", FORGED)  # uploaded with the hand-in: the server's must win
    tried["submit as Ada"] = shell_output(run, MAL, ["nbgrader", "submit", ASSIGNMENT, f"--student={ADA}"])
    tried["submit with a claimed time"] = shell_output(
        run, MAL, ["nbgrader", "submit", ASSIGNMENT, f"--Exchange.timestamp_format={FORGED}"]
    )
    solution = run.course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    link = f"os.path.expanduser('~/{ASSIGNMENT}/solution.ipynb')"
    run.hub.run_as(MAL, f"import os\nos.symlink({str(solution)!r}, {link})")
    tried["submit a link to the solution"] = shell_output(run, MAL, ["nbgrader", "submit", ASSIGNMENT])
    run.hub.run_as(MAL, f"import os\nos.remove({link})")
    tried["release over the assignment"] = shell_output(
        run, MAL, ["nbgrader", "release_assignment", ASSIGNMENT, "--force", f"--CourseDirectory.root=/home/{MAL}",
                   "--CourseDirectory.release_directory=."],
    )
    (run.artifacts / "mal-attacks.json").write_text(json.dumps(tried, indent=1))
    run.feedback_page["mal attacks"] = json.dumps(tried)


def upload_naming_ada(run: ClassRun) -> None:
    """Mal, with their own token, posts to ngshare's API more submissions than collect looks at of one student
    (``SafeExchangeCollect.max_handins`` + 1), each naming Ada every way a request can (``student_id`` and
    ``student`` in the body and the query): on the filesystem exchange, folders named for Ada crowded her out."""
    code = (
        "import base64, json, os, requests\n"
        "token = os.environ['JUPYTERHUB_API_TOKEN']\n"
        f"files = [{{'path': {ASSIGNMENT + '.ipynb'!r}, 'content': base64.b64encode(b'{{}}').decode()}}]\n"
        f"url = os.environ['TFCOURSE_NGSHARE_URL'] + '/submission/{COURSE_ID}/{ASSIGNMENT}'\n"
        f"named = {{'student_id': {ADA!r}, 'student': {ADA!r}}}\n"
        f"answers = [requests.post(url, headers={{'Authorization': 'token ' + token}}, params=named,\n"
        "                         data={'files': json.dumps(files), **named}).json()['success']\n"
        f"           for _ in range({NAMING_ADA})]\n"
        "print(json.dumps(answers))\n"
    )
    answers = json.loads(run.hub.run_as(MAL, code))
    assert answers == [True] * NAMING_ADA, f"ngshare refused an upload itself: {answers}"


def upload_malformed(run: ClassRun) -> None:
    """Mal, from their own server, posts to ngshare's API with their own token a submission whose
    ``timestamp.txt`` is a folder (``timestamp.txt/x``) beside a notebook. ngshare accepts it (each path
    stays inside the submission). The token comes back for the log check and is written nowhere."""
    code = (
        "import base64, json, os, requests\n"
        "token = os.environ['JUPYTERHUB_API_TOKEN']\n"
        "def file(path, data): return {'path': path, 'content': base64.b64encode(data).decode()}\n"
        f"files = [file('timestamp.txt/x', b'x'), file({ASSIGNMENT + '.ipynb'!r}, b'{{}}')]\n"
        f"url = os.environ['TFCOURSE_NGSHARE_URL'] + '/submission/{COURSE_ID}/{ASSIGNMENT}'\n"
        "sent = requests.post(url, headers={'Authorization': 'token ' + token}, data={'files': json.dumps(files)})\n"
        "print(json.dumps({'status': sent.status_code, 'answer': sent.json(), 'token': token}))\n"
    )
    sent = json.loads(run.hub.run_as(MAL, code))
    run.feedback_page["mal token"] = sent.pop("token")
    (run.artifacts / "mal-malformed-upload.json").write_text(json.dumps(sent, indent=1))
    assert sent["status"] == 200 and sent["answer"]["success"], f"ngshare refused the upload itself: {sent}"


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the sockets listening on TCP ``port`` (IPv4 and IPv6), from /proc/net/tcp{,6}."""
    found = set()
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                continue
            raw = bytes.fromhex(address)  # the kernel writes each 32-bit word in host order
            words = b"".join(struct.pack("@I", word) for word in struct.unpack(">" + "I" * (len(raw) // 4), raw))
            found.add(str(ipaddress.ip_address(socket.inet_ntop(family, words))))
    return found


def attacks(run: ClassRun) -> dict[str, str]:
    return json.loads(run.feedback_page["mal attacks"])


def test_release_to_feedback_through_ngshare(ngshare_run: ClassRun) -> None:
    export = ngshare_run.export
    shown = score_shown(ngshare_run.feedback_page[ADA])
    assert shown == f"{export.loc[ADA, 'autograded_score']:g} / {export.loc[ADA, 'autograded_max']:g}", shown
    assert export.loc[ADA, "autograded_score"] == export.loc[ADA, "autograded_max"] > 0
    release = (ngshare_run.course / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    assert (ngshare_run.artifacts / "ada-fetched.ipynb").read_text() == release, "Ada fetched a changed notebook"


def test_a_chinese_student_fetches_the_chinese_notebook_through_ngshare(ngshare_run: ClassRun) -> None:
    """Mal's roster entry says Chinese: ngshare's fetch gives Mal the Chinese notebook, and Ada the English one;
    neither gets the translated editions' folder the release carries inside the assignment."""
    assert ngshare_run.fetched_edition == {ADA: None, MAL: "zh"}, ngshare_run.fetched_edition
    for student in (ADA, MAL):
        fetched = json.loads(ngshare_run.feedback_page[f"{student} fetched"])
        assert ".editions" not in fetched, f"{student}'s fetched folder holds the translated editions: {fetched}"


def test_nobody_hands_in_as_another_or_gets_another_s_feedback(ngshare_run: ClassRun) -> None:
    tried = attacks(ngshare_run)
    assert "explicit student ID is not possible" in tried["submit as Ada"], tried["submit as Ada"]
    ada = ngshare_run.export.loc[ADA]  # Mal's untouched notebook, had it counted as Ada's, would score 0
    assert ada["autograded_score"] == ada["autograded_max"] > 0, ada.to_dict()
    pages = json.loads((ngshare_run.artifacts / "mal-feedback-pages.json").read_text())
    assert pages, "Mal's own feedback did not come (the check below would pass on nothing)"
    assert all(names_mal and not names_ada for names_ada, names_mal in pages), f"Mal holds Ada's page: {pages}"


def test_the_hand_in_time_is_the_server_s_and_links_are_not_followed(ngshare_run: ClassRun) -> None:
    taken = submitted_at(ngshare_run.course / "grading" / "submitted" / MAL / ASSIGNMENT)
    assert taken is not None and abs((datetime.now(UTC) - taken).total_seconds()) < 1800, taken
    link = attacks(ngshare_run)["submit a link to the solution"]
    # refused by the student-side submit's own check, in Mal's edition (Chinese), or else read with Mal's own rights
    refused = "未提交：./solution.ipynb 是符号链接" in link or "Permission" in link
    assert refused and "Submitted as" not in link, link
    collected = ngshare_run.course / "grading" / "submitted" / MAL / ASSIGNMENT
    assert not (collected / "solution.ipynb").exists()


def test_a_student_cannot_release(ngshare_run: ClassRun) -> None:
    released = attacks(ngshare_run)["release over the assignment"]
    assert "Permission denied" in released and "Successfully released" not in released, released


def test_the_instructor_s_collect_refuses_a_malformed_submission_and_collects_everyone_else(
    ngshare_run: ClassRun,
) -> None:
    """ngshare_exchange's collect failed for the whole class on Mal's upload, at every try; in a terminal of the
    course folder ``nbgrader collect`` went to the filesystem exchange (the course's settings, read last)."""
    collected = ngshare_run.feedback_page["teacher collect"]
    assert "exit 0" in collected and f"Collecting submission: {ADA} {ASSIGNMENT}" in collected, collected
    refusal = f"Refused a hand-in of {ASSIGNMENT} naming {MAL}"
    assert refusal in collected and "timestamp.txt is a folder where nbgrader reads a file" in collected, collected
    submitted = ngshare_run.course / "grading" / "submitted"
    for student in (ADA, MAL):  # Mal's latest good hand-in (the one with a claimed time) counts
        notebook = submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        assert notebook.is_file() and (notebook.parent / "timestamp.txt").is_file(), f"{student} was not collected"
    refused = json.loads((ngshare_run.course / "grading" / "refused_handins.json").read_text())
    mine = [entry for entry in refused if entry["student"] == MAL and "timestamp.txt" in entry["reason"]]
    assert len(mine) == 1 and mine[0]["assignment"] == ASSIGNMENT, refused
    assert ngshare_run.export.loc[ADA, "autograded_score"] > 0  # graded after it: nothing stopped the class


def test_uploads_naming_another_student_are_filed_under_the_uploader(ngshare_run: ClassRun) -> None:
    """ngshare files a submission under its token's user, whatever the request names: Mal's uploads naming Ada are
    Mal's, Ada's own is her only one and was collected."""
    listed = listed_submissions(ngshare_run)
    assert len(listed.get(ADA, [])) == 1, f"Ada's submissions as ngshare lists them: {listed.get(ADA)}"
    assert len(listed.get(MAL, [])) >= NAMING_ADA, f"Mal's: {listed.get(MAL)}"
    collected = ngshare_run.feedback_page["teacher collect"]
    assert f"Collecting submission: {ADA} {ASSIGNMENT}" in collected, collected


def test_ngshare_listens_on_the_loopback_only(ngshare_run: ClassRun) -> None:
    """ngshare 0.6.0 binds 0.0.0.0 when a hub runs it: anyone reaching the machine reached the exchange."""
    addresses = listening_addresses(ngshare_run.hub.port + 3)  # ngshare's port (classroom/jupyterhub_config.py)
    assert addresses == {"127.0.0.1"}, f"ngshare listens on {addresses or 'nothing'}, expected 127.0.0.1 only"


def test_no_token_in_the_hub_s_output(ngshare_run: ClassRun) -> None:
    """The hub's output holds ngshare's too: every request Mal's token made, to ngshare and through it to the hub."""
    token = ngshare_run.feedback_page["mal token"]
    assert len(token) >= 32
    log = ngshare_run.hub.log.read_text(errors="replace")
    assert "ngshare" in log, "the hub's output does not cover ngshare"
    assert token not in log, "a student's hub token is in the hub's output"


BURST = [f"tfng-burst{index:02d}" for index in range(12)]
BURST_GAP = 0.5  # seconds between two students' submits: the burst outlasts the kill
NOT_CONFIRMED = MESSAGE_NOT_CONFIRMED.split("(it may")[0]  # what a student whose upload ngshare missed reads


def enrol(run: ClassRun, students: list[str]) -> dict[str, str]:
    """Each student a system user, a hub user with a token of their own, and a student of the course in ngshare
    (added by the instructor, from their server, through ngshare's API); each student's token."""
    tokens = {}
    for student in students:
        ensure_user(student, STUDENTS)
        run.hub.user(student)
        tokens[student] = run.hub.request(f"hub/api/users/{student}/tokens", method="POST", body={"note": "burst"})[
            "token"
        ]
    roster = [{"username": s, "first_name": s, "last_name": "burst", "email": f"{s}@example.org"} for s in students]
    code = (
        "import json, os, requests\n"
        f"url = os.environ['TFCOURSE_NGSHARE_URL'] + '/students/{COURSE_ID}'\n"
        "headers = {'Authorization': 'token ' + os.environ['JUPYTERHUB_API_TOKEN']}\n"
        f"print(requests.post(url, headers=headers, data={{'students': json.dumps({roster!r})}}).json()['success'])\n"
    )
    assert run.hub.run_as(TEACHER, code).strip() == "True", "ngshare did not enrol the burst's students"
    return tokens


def hand_out(run: ClassRun, student: str) -> bytes:
    """01 in the student's home, with a line of their own (each hand-in tells whose it is); its bytes."""
    notebook = nbformat.read(run.course / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell(f"Handed in by {student} in the burst."))
    account = pwd.getpwnam(student)
    folder = Path(account.pw_dir) / ASSIGNMENT
    folder.mkdir(exist_ok=True)
    path = folder / f"{ASSIGNMENT}.ipynb"
    path.write_text(nbformat.writes(notebook))
    for owned in (folder, path):
        os.chown(owned, account.pw_uid, account.pw_gid)
    return path.read_bytes()


def student_environment(run: ClassRun, student: str, token: str) -> dict[str, str]:
    """What the student's server (and its terminal) has: the student's settings, ngshare's address, their token."""
    layout, account = run.hub.layout, pwd.getpwnam(student)
    return {
        "HOME": account.pw_dir, "USER": student, "LOGNAME": student, "JUPYTERHUB_USER": student,
        "JUPYTERHUB_API_TOKEN": token, "PATH": f"{layout.env / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "JUPYTER_CONFIG_PATH": os.pathsep.join(str(layout.role_config(role)) for role in ("student", "common")),
        "TFCOURSE_NGSHARE_URL": f"http://127.0.0.1:{run.hub.port + 3}/services/ngshare",
        VIEW_VARIABLE: str(layout.prefix / VIEW_FOLDER),
    }


def submit_as(run: ClassRun, student: str, token: str) -> subprocess.Popen:
    """``nbgrader submit 01`` as the student's system account, in their server's environment. Its output is the
    student's view of the hand-in."""
    layout, account = run.hub.layout, pwd.getpwnam(student)
    environment = student_environment(run, student, token)
    return subprocess.Popen(
        [str(layout.env / "bin" / "nbgrader"), "submit", ASSIGNMENT], cwd=account.pw_dir, env=environment,
        user=account.pw_uid, group=account.pw_gid, extra_groups=os.getgrouplist(student, account.pw_gid),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def ngshare_process(run: ClassRun) -> psutil.Process | None:
    """This hub's ngshare (its database is under this hub's prefix), if one runs."""
    database = str(run.hub.layout.ngshare_state / "ngshare.db")
    for process in psutil.process_iter(["cmdline"]):
        if any(database in part for part in process.info["cmdline"] or []):
            return process
    return None


def stored_submissions(run: ClassRun) -> int:
    """The submissions ngshare's database holds (read as root, read-only; 0 while it is busy writing)."""
    database = run.hub.layout.ngshare_state / "ngshare.db"
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as connection:
            return connection.execute("SELECT count(*) FROM submissions").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def listed_submissions(run: ClassRun) -> dict[str, list[str]]:
    """What ngshare lists to the instructor: student -> the times of their submissions of 01."""
    code = (
        "import json, os, requests\n"
        f"url = os.environ['TFCOURSE_NGSHARE_URL'] + '/submissions/{COURSE_ID}/{ASSIGNMENT}'\n"
        "answer = requests.get(url, headers={'Authorization': 'token ' + os.environ['JUPYTERHUB_API_TOKEN']}).json()\n"
        "print(json.dumps(answer['submissions']))\n"
    )
    listed: dict[str, list[str]] = {}
    for entry in json.loads(run.hub.run_as(TEACHER, code)):
        listed.setdefault(entry["student_id"], []).append(entry["timestamp"])
    return listed


def burst_with_ngshare_killed(run: ClassRun, tokens: dict[str, str]) -> tuple[dict[str, str], float, int]:
    """Each student's submit started ``BURST_GAP`` apart; ngshare killed (SIGKILL, as a crash) once 3 of theirs are
    stored. What each student saw, when the kill fell, the pid killed."""
    stored_before, victim = stored_submissions(run), ngshare_process(run)
    assert victim is not None, "no ngshare process found for this hub"
    burst, killed_at, started = {}, None, time.monotonic()
    for student in [*BURST, None]:  # None: the burst is out, wait for the kill
        if student is not None:
            burst[student] = submit_as(run, student, tokens[student])
        deadline = time.monotonic() + (BURST_GAP if student is not None else 300)
        while time.monotonic() < deadline and (student is not None or killed_at is None):
            if killed_at is None and stored_submissions(run) >= stored_before + 3:
                victim.kill()
                killed_at = time.monotonic()
            time.sleep(0.05)
    assert killed_at is not None, f"3 of the burst's hand-ins were not stored in {time.monotonic() - started:.0f} s"
    saw = {student: seen(process) for student, process in burst.items()}
    return saw, killed_at, victim.pid


def seen(submit: subprocess.Popen) -> str:
    """What the student's submit printed, and its exit status (the Assignments tab shows an error for a non-zero)."""
    output = submit.communicate(timeout=300)[0]
    return f"{output}\nexit {submit.returncode}"


def seconds_until_ngshare_is_back(run: ClassRun, killed_pid: int, killed_at: float, timeout: float = 90) -> float:
    while (back := ngshare_process(run)) is None or back.pid == killed_pid or not listening_addresses(run.hub.port + 3):
        waited = time.monotonic() - killed_at
        assert waited < timeout, f"the hub did not start ngshare again in {timeout} s:\n{run.hub.log_tail()}"
        time.sleep(0.5)
    return round(time.monotonic() - killed_at, 1)


def test_ngshare_killed_mid_burst_each_hand_in_is_whole_or_refused_aloud(ngshare_run: ClassRun) -> None:
    """12 students hand in 01 half a second apart with nbgrader's submit, as themselves; ngshare is killed (SIGKILL,
    as a crash) once 3 of theirs are stored, and the hub starts it again (JupyterHub restarts a managed service that
    exits, at its next poll, within about 30 s). Each student saw "Submitted as" (exit 0) or "Not confirmed" (exit
    1, which the Assignments tab shows as an error); every submission ngshare lists is collected, byte for byte what
    the student had; every "Submitted as" is listed; a student who saw the failure hands in again once ngshare is
    back, and that hand-in is collected."""
    run, started = ngshare_run, time.monotonic()
    try:
        tokens = enrol(run, BURST)
        handed_out = {student: hand_out(run, student) for student in BURST}
        saw, killed_at, killed_pid = burst_with_ngshare_killed(run, tokens)
        restarted_after = seconds_until_ngshare_is_back(run, killed_pid, killed_at)
        (run.artifacts / "burst-students-saw.json").write_text(json.dumps(saw, indent=1))
        succeeded = {student for student, said in saw.items() if "Submitted as" in said and said.endswith("exit 0")}
        failed = {student for student, said in saw.items() if NOT_CONFIRMED in said and said.endswith("exit 1")}
        unclear = set(BURST) - succeeded - failed
        assert not unclear, f"students told neither success nor failure: { {s: saw[s] for s in unclear} }"
        assert succeeded and failed, f"the kill fell outside the burst: {len(succeeded)} handed in, {len(failed)} not"
        retried = sorted(failed)[0]
        again = seen(submit_as(run, retried, tokens[retried]))
        assert "Submitted as" in again, f"{retried} handed in again once ngshare was back and saw:\n{again}"
        listed = listed_submissions(run)
        collected = shell_output(run, TEACHER, ["nbgrader", "collect", ASSIGNMENT], cwd=str(run.course))
        (run.artifacts / "burst-collect.txt").write_text(collected)
        assert succeeded | {retried} <= set(listed), f"told 'Submitted as' but not listed: {succeeded - set(listed)}"
        for student in set(BURST) & set(listed):
            notebook = run.course / "grading" / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
            assert notebook.is_file(), f"{student}'s submission is listed by ngshare, not collected:\n{collected}"
            assert notebook.read_bytes() == handed_out[student], f"{student}'s collected notebook is not what they had"
    finally:
        for student in BURST:
            remove_user(student)
    run.seconds[
        f"ngshare killed mid-burst: {len(succeeded)} of {len(BURST)} handed in, {len(failed)} told 'Not confirmed', "
        f"{len(set(BURST) & set(listed))} listed and collected whole, ngshare back after {restarted_after} s"
    ] = round(time.monotonic() - started, 1)
    (run.artifacts / "timings.json").write_text(json.dumps(run.seconds, indent=1))


DEADLINE_CLASS = [f"tfng-d{index:03d}" for index in range(100)]
DEADLINE_STAGGER = 0.2  # seconds between two students' starts: the 100th starts at 19.8 s
DEADLINE_WINDOW = 60.0  # every hand-in done within this many seconds of the first start


def submit_forked(run: ClassRun, student: str, token: str, start_at: float, report: Path) -> int:
    """The student's submit in a process forked from the test (:func:`submit_in_child`), in their server's
    environment; the ngshare hub's settings name the course's ngshare submit."""
    # Imported before the fork, as root: ngshare_exchange reads the user's name once, at its import (a root shell
    # may not set it), and the child sets the student's in its place.
    os.environ.setdefault("USER", pwd.getpwuid(os.getuid()).pw_name)
    import ngshare_exchange.exchange

    from classroom.student_submit import CheckedNgshareSubmit  # noqa: F401 (made here, used by name in the child)

    def as_the_student() -> None:
        ngshare_exchange.exchange.Exchange.username = student

    environment = student_environment(run, student, token)
    return submit_in_child(student, ASSIGNMENT, environment, start_at, report, as_the_student)


def test_100_hand_ins_through_ngshare_within_a_minute_each_collected_byte_for_byte(ngshare_run: ClassRun) -> None:
    """The last minute before a deadline on the ngshare hub: 100 students (real system users, each with their own
    hub token, enrolled in ngshare) hand in 01 one every 0.2 s; every submit succeeds, the last is done within 60 s
    of the first start, and the instructor's collect takes every hand-in, byte for byte what the student had."""
    run, started = ngshare_run, time.monotonic()
    reports = Path(tempfile.mkdtemp(prefix="ngshare-burst-"))
    reports.chmod(0o1777)
    try:
        tokens = enrol(run, DEADLINE_CLASS)
        handed_out = {student: hand_out(run, student) for student in DEADLINE_CLASS}
        first = time.monotonic() + 1.0
        children = [submit_forked(run, student, tokens[student], first + index * DEADLINE_STAGGER, reports / student)
                    for index, student in enumerate(DEADLINE_CLASS)]
        for pid in children:
            os.waitpid(pid, 0)
        outcomes = {student: json.loads((reports / student).read_text()) if (reports / student).exists()
                    else {"error": "no report"} for student in DEADLINE_CLASS}
        failed = {student: outcome["error"] for student, outcome in outcomes.items() if "error" in outcome}
        assert not failed, f"{len(failed)} of 100 submits failed; the first: {next(iter(failed.items()))}"
        seconds = sorted(outcome["seconds"] for outcome in outcomes.values())
        last = max(outcome["began"] + outcome["seconds"] - first for outcome in outcomes.values())
        collecting = time.monotonic()
        collected = shell_output(run, TEACHER, ["nbgrader", "collect", ASSIGNMENT], cwd=str(run.course))
        collect_seconds = time.monotonic() - collecting
        (run.artifacts / "deadline-collect.txt").write_text(collected)
        submitted = run.course / "grading" / "submitted"
        missing = [s for s in DEADLINE_CLASS if not (submitted / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()]
        assert not missing, f"{len(missing)} hand-ins not collected ({missing[:5]}); collect said:\n{collected[-2000:]}"
        changed = [s for s in DEADLINE_CLASS
                   if (submitted / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() != handed_out[s]]
        assert not changed, f"collected notebooks differ from what their students handed in: {changed[:5]}"
    finally:
        shutil.rmtree(reports, ignore_errors=True)
        for student in DEADLINE_CLASS:
            remove_user(student)
    figures = {"students": 100, "stagger_s": DEADLINE_STAGGER, "median_submit_s": round(statistics.median(seconds), 2),
               "p95_submit_s": round(seconds[94], 2), "slowest_submit_s": round(seconds[-1], 2),
               "last_done_after_s": round(last, 1), "collect_s": round(collect_seconds, 1)}
    (run.artifacts / "deadline-burst.json").write_text(json.dumps(figures, indent=1))
    run.seconds[f"100 hand-ins through ngshare: {figures}"] = round(time.monotonic() - started, 1)
    (run.artifacts / "timings.json").write_text(json.dumps(run.seconds, indent=1))
    assert last <= DEADLINE_WINDOW, f"the last hand-in ended {last:.1f} s after the first began: {figures}"


FLOOD = 20  # uploads at once, as issue 50's: 20 x 60 MB took ngshare to 2,092 MiB
FLOOD_BYTES = 60 * 10**6


def upload_junk(run: ClassRun, token: str, size: int) -> str:
    """A submission of ``size`` bytes of junk posted to ngshare's API with a student's token, sent 1 MiB at a time
    (the test holds one MiB, ngshare the whole body); how it ended."""
    connection = http.client.HTTPConnection("127.0.0.1", run.hub.port + 3, timeout=300)
    chunk, prefix = b"A" * 2**20, b"files="
    try:
        connection.putrequest("POST", f"/services/ngshare/submission/{COURSE_ID}/{ASSIGNMENT}")
        for name, value in (("Authorization", f"token {token}"), ("Content-Length", str(len(prefix) + size)),
                            ("Content-Type", "application/x-www-form-urlencoded")):
            connection.putheader(name, value)
        connection.endheaders(prefix)
        for start in range(0, size, len(chunk)):
            connection.send(chunk[: size - start])
        return f"HTTP {connection.getresponse().status}"
    except OSError as error:
        return type(error).__name__
    finally:
        connection.close()


def test_a_flood_of_large_uploads_stays_within_ngshare_s_memory_limit_and_hand_ins_work_after(
    ngshare_run: ClassRun,
) -> None:
    """Mal posts 20 uploads of 60 MB at once to ngshare (tornado holds each body whole in memory). ngshare runs in a
    cgroup of its own with a memory limit (NGSHARE_MEM_LIMIT, 1G): the flood reaches that limit (the kernel counts a
    refused charge, or stops ngshare, which the hub starts again) and ngshare's memory, as the kernel counts it,
    never passes it; then a student hands in with nbgrader's submit, and it is listed. (Its resident size, sampled
    every 0.1 s, is recorded: it also counts shared library pages charged to other processes.)"""
    run, student = ngshare_run, "tfng-after"
    server = ngshare_process(run)
    assert server is not None, "no ngshare process found for this hub"
    cgroup = Path("/sys/fs/cgroup/memory") / own_cgroup("memory", server.pid).lstrip("/")
    assert cgroup.parent.name == SERVICES and cgroup.name == NGSHARE_USER, f"ngshare runs in {cgroup}: not its own"
    limit = int((cgroup / "memory.limit_in_bytes").read_text())
    assert HubSettings.ngshare_mem_limit.default_value == "1G" and limit == 2**30
    for counter in ("memory.max_usage_in_bytes", "memory.failcnt"):
        (cgroup / counter).write_text("0")  # from here on
    kills_before = oom_kills(cgroup)
    token = run.hub.request(f"hub/api/users/{MAL}/tokens", method="POST", body={"note": "flood"})["token"]
    peak, started = 0, time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(FLOOD) as pool:
        uploads = [pool.submit(upload_junk, run, token, FLOOD_BYTES) for _ in range(FLOOD)]
        while not all(upload.done() for upload in uploads):
            assert time.monotonic() - started < 600, "the uploads did not end within 10 minutes"
            server = ngshare_process(run)
            try:
                peak = max(peak, server.memory_info().rss if server else 0)
            except psutil.NoSuchProcess:
                pass  # stopped by the kernel for memory: the hub starts it again
            time.sleep(0.1)
    ended = sorted(upload.result() for upload in uploads)
    charged, refused = (int((cgroup / name).read_text()) for name in ("memory.max_usage_in_bytes", "memory.failcnt"))
    stopped = oom_kills(cgroup) - kills_before
    seen_by = (f"{FLOOD} uploads of {FLOOD_BYTES:,} bytes at once: ngshare's cgroup at most {charged >> 20} MiB, "
               f"{refused} charges refused, ngshare stopped {stopped} time(s), resident at most {peak >> 20} MiB; "
               f"the uploads ended {dict(collections.Counter(ended))}")
    run.seconds[seen_by] = round(time.monotonic() - started, 1)
    assert charged <= 2**30 and (refused > 0 or stopped > 0), f"the flood did not press on ngshare's limit: {seen_by}"
    deadline = time.monotonic() + 120
    while (server := ngshare_process(run)) is None or not listening_addresses(run.hub.port + 3):
        assert time.monotonic() < deadline, f"ngshare was not back within 120 s:\n{run.hub.log_tail()}"
        time.sleep(0.5)
    try:
        tokens = enrol(run, [student])
        hand_out(run, student)
        said = seen(submit_as(run, student, tokens[student]))
        assert "Submitted as" in said and said.endswith("exit 0"), f"a hand-in after the flood failed:\n{said}"
        assert student in listed_submissions(run), f"{student}'s hand-in after the flood is not listed"
    finally:
        remove_user(student)
    (run.artifacts / "timings.json").write_text(json.dumps(run.seconds, indent=1))
