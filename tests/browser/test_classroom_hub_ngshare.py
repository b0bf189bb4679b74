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

import ipaddress
import json
import os
import socket
import struct
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from autograder.course.deadlines import submitted_at
from autograder.course.notebooks import reference_answers
from autograder.course.settings import source_notebook
from classroom.layout import COURSE_ID, INSTRUCTORS, STUDENTS
from tests.browser.assignments_page import AssignmentsTab, log_in
from tests.browser.test_classroom_hub import (
    ClassRun,
    answers_notebook,
    hub_class,
    open_feedback,
    release_in_formgrader,
    score_shown,
    shell,
)

pytestmark = pytest.mark.slow
ASSIGNMENT = "01_attention"
TEACHER, ADA, MAL = "tfng-teacher", "tfng-ada", "tfng-mal"
FORGED = "2000-01-01 00:00:00.000000 UTC"


@pytest.fixture(scope="module")
def ngshare_run(browser, artifacts: Path) -> Iterator[ClassRun]:
    if os.geteuid() != 0:
        pytest.skip("the ngshare hub test creates system users and runs JupyterHub as root (CI runs as root)")
    folder = artifacts / "hub-ngshare"
    folder.mkdir(parents=True, exist_ok=True)
    with hub_class({TEACHER: INSTRUCTORS, ADA: STUDENTS, MAL: STUDENTS}, folder, exchange="ngshare") as run:
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
                     f"print(json.dumps([[{ADA!r} in t, {MAL!r} in t] for t in texts]))")  # fmt: skip
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
    tried["fetch"] = shell_output(run, MAL, ["nbgrader", "fetch_assignment", ASSIGNMENT])
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
    )  # fmt: skip
    (run.artifacts / "mal-attacks.json").write_text(json.dumps(tried, indent=1))
    run.feedback_page["mal attacks"] = json.dumps(tried)


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
    # refused by the student-side submit's own check, or else read with Mal's own rights: permission denied
    assert ("symbolic link" in link or "Permission" in link) and "Submitted as" not in link, link
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
