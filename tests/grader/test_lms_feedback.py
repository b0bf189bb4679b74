"""Feedback pages back into the LMS: Moodle's feedback zip, and Canvas's submission comments through its API.

Each student's pages are files under ``grading/feedback/<student>/<assignment>/`` (as ``feedback``
writes them; their content is tested with ``feedback``), and the LMS identifiers are what collect
read from the download. Moodle's zip is read back with a port of Moodle's own matcher; Canvas's
uploads go to a local server that answers as Canvas's REST API documents and records what it got.
"""

import argparse
import json
import re
import threading
import zipfile
from collections.abc import Iterator
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from autograder.cli import main
from autograder.course.course import Course
from autograder.lms.canvas import TOKEN_VARIABLE
from autograder.lms.moodle import Moodle
from autograder.pipeline.commands.collect import CANVAS, MOODLE, lms_students_path
from tests.grader.hostile_class import ASSIGNMENT
from tests.support.course import ThrowawayCourse

SECOND = "02_multi_head_attention"
PAGE = "<html><body>feedback of {student}</body></html>"


def feedback_class(course: Course, students: dict[str, tuple[str, str, dict[str, str]]]) -> None:
    """``{student: (lms, name, {assignment: id})}``: a page per assignment the student has an id for, or one of 01."""
    known = {}
    for student, (lms, name, ids) in students.items():
        known[student] = {"lms": lms, "name": name, "ids": ids}
        for assignment in ids or {ASSIGNMENT: ""}:
            folder = course.grading.feedback(student, assignment)
            folder.mkdir(parents=True)
            (folder / f"{assignment}.html").write_text(PAGE.format(student=student))
            (folder / "timestamp.txt").write_text("2026-03-01 10:00:00")  # beside the page: never sent
    lms_students_path(course).write_text(json.dumps(known))


def moodle_import_match(path: str, participants: set[int]) -> tuple[int, str] | None:
    """Port of ``is_valid_filename_for_import`` (mod/assign/feedback/file/importziplib.php, moodle/moodle):
    ``(participant id, file name)`` Moodle files the entry under, or None when the import skips it."""
    name = path.rsplit("/", 1)[-1]
    if path.endswith("/") or name.startswith((".", "~")):
        return None
    parts = path.split("/")
    while parts:
        info = parts.pop(0).split("_", 4)  # PHP's explode('_', $pathpart, 5)
        if len(info) < 4 or not re.fullmatch(r"\s*[+-]?\d+(\.\d*)?\s*", info[1]):  # is_numeric
            continue
        participant = int(float(info[1]))
        if participant not in participants or (info[2], info[3]) != ("assignsubmission", "file"):
            continue  # no such participant, or get_plugin_by_type finds no plugin
        return participant, "/".join([info[4] if len(info) == 5 else "", *parts])
    return None


def test_moodle_feedback_zip_is_what_moodles_import_reads(
    tmp_path: Path, throwaway_course: ThrowawayCourse, capsys: pytest.CaptureFixture[str]
) -> None:
    course = throwaway_course(ASSIGNMENT)
    feedback_class(course, {
        "Ann_Lee": (MOODLE, "Ann Lee", {ASSIGNMENT: "42", SECOND: "77"}),  # a participant id per assignment
        "Bob_Ray": (MOODLE, "Bob Ray", {ASSIGNMENT: "43"}),
        "Participant_44": (MOODLE, "Participant", {ASSIGNMENT: "44"}),  # blind marking
        "dots": (MOODLE, "..", {ASSIGNMENT: "45"}),  # names a student set: never a path
        "slashes": (MOODLE, "../../etc/passwd\\x_1_assignsubmission_file_" + "y" * 5000, {ASSIGNMENT: "46"}),
        "forged": (MOODLE, "Eve", {ASSIGNMENT: "47/../../x"}),  # not an id: reported, never written
        "plain": ("", "plain", {}),  # a folder of their own: no Moodle id
        "smithjane": (CANVAS, "smithjane", {ASSIGNMENT: "1234"}),
    })
    output = tmp_path / "grades.csv"

    assert main(["--root", str(course.root), "export", "--format", MOODLE, "--feedback", "--output", str(output)]) == 0

    zips = {path.name: path for path in tmp_path.glob("*.zip")}
    assert sorted(zips) == [f"moodle-feedback-{ASSIGNMENT}.zip", f"moodle-feedback-{SECOND}.zip"]
    with zipfile.ZipFile(zips[f"moodle-feedback-{ASSIGNMENT}.zip"]) as archive:
        names = archive.namelist()
        pages = {name: archive.read(name).decode() for name in names}
    participants = {42, 43, 44, 45, 46}
    matched = {moodle_import_match(name, participants) for name in names}
    assert matched == {(p, f"/{ASSIGNMENT}.html") for p in participants}, names  # one page per participant
    assert len(names) == len(participants)
    assert pages["Ann Lee_42_assignsubmission_file_/01_attention.html"] == PAGE.format(student="Ann_Lee")
    for name in names:  # nothing climbs out of the folder Moodle unpacks it into, nothing nests deeper
        assert name.count("/") == 1 and ".." not in name.split("/") and "\\" not in name and not name.startswith("/")
        assert len(name) < 200  # a name of 5,000 characters is cut
    with zipfile.ZipFile(zips[f"moodle-feedback-{SECOND}.zip"]) as archive:
        assert [moodle_import_match(n, {77}) for n in archive.namelist()] == [(77, f"/{SECOND}.html")]
    out = capsys.readouterr().out
    assert f"left out, no moodle identifier from collect: forged/{ASSIGNMENT}, plain/{ASSIGNMENT}, " \
           f"smithjane/{ASSIGNMENT}" in out
    assert "6 submissions with feedback" in out  # Ann Lee's two, and four more


def test_moodles_matcher_port_refuses_what_moodle_refuses() -> None:
    """The port itself, on names importziplib.php rejects and accepts (so the zip test can fail)."""
    assert moodle_import_match("Ann Lee_42_assignsubmission_file_/a.html", {42}) == (42, "/a.html")
    assert moodle_import_match("Ann Lee_42_assignsubmission_file/a.html", {42}) == (42, "/a.html")  # Moodle >= 4.1
    assert moodle_import_match("Ann Lee_42_assignsubmission_file_a.html", {42}) == (42, "a.html")  # flat, before 3.1
    assert moodle_import_match("Ann_Lee_42_assignsubmission_file_/a.html", {42}) is None  # "_" in the name
    assert moodle_import_match("Ann Lee_42_assignsubmission_file_/a.html", {43}) is None  # not a participant
    assert moodle_import_match("Ann Lee_42_feedback_file_/a.html", {42}) is None
    assert moodle_import_match("Ann Lee_42_assignsubmission_file_/.hidden", {42}) is None


def test_moodle_feedback_with_nothing_to_send_writes_no_zip(tmp_path: Path, throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course(ASSIGNMENT)
    sent = Moodle(course).send_feedback(argparse.Namespace(output=tmp_path / "grades.csv"))
    assert (sent.files, sent.students, sent.left_out) == ([], 0, []) and not list(tmp_path.iterdir())


class FakeCanvas(BaseHTTPRequestHandler):
    """Canvas's REST API, the calls canvasapi makes for a submission comment file: GET course, GET assignments,
    GET submission, POST comments/files (step 1 of Canvas's file upload: where to send it), POST the file to that
    address (step 2: the file's JSON back, 201), PUT the submission with ``comment[file_ids][]`` (the comment)."""

    course, assignments, token = 7, {ASSIGNMENT: 11, SECOND: 12}, "secret-token"
    received: list[dict] = []

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def reply(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        seen = {"method": self.command, "path": url.path, "query": parse_qs(url.query),
                "auth": self.headers.get("Authorization")}
        self.received.append(seen)
        base = f"/api/v1/courses/{self.course}"
        if url.path.startswith("/files/"):  # step 2: no token, a multipart form with the upload params and file
            form = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode() + body)
            parts = {p.get_param("name", header="content-disposition"): p for p in form.iter_parts()}
            seen["form"] = {name: part.get_content() for name, part in parts.items() if name != "file"}
            seen["file"] = (parts["file"].get_filename(), parts["file"].get_payload(decode=True).decode())
            file_id = 500 + len([r for r in self.received if r["path"].startswith("/files/")])
            return self.reply(201, {"id": file_id, "url": f"http://canvas.test/files/{file_id}/download",
                                    "display_name": seen["file"][0]})
        if self.headers.get("Authorization") != f"Bearer {self.token}":
            return self.reply(401, {"errors": [{"message": "Invalid access token."}]})
        seen["form"] = parse_qs(body.decode())
        if url.path == base:
            return self.reply(200, {"id": self.course, "name": "Transformers"})
        if url.path == f"{base}/assignments":
            listed = [{"id": i, "name": n, "course_id": self.course} for n, i in self.assignments.items()]
            return self.reply(200, listed)
        found = re.fullmatch(rf"{base}/assignments/(\d+)/submissions/(\d+)(/comments/files)?", url.path)
        if not found:
            return self.reply(404, {"errors": [{"message": "The specified resource does not exist."}]})
        assignment, user = int(found.group(1)), int(found.group(2))
        if found.group(3):  # step 1: the upload's name and size in, where to post it out
            params = {"filename": seen["form"]["name"][0], "key": "token-1"}
            upload_url = f"http://{self.headers['Host']}/files/upload"
            return self.reply(200, {"upload_url": upload_url, "upload_params": params})
        return self.reply(200, {"id": 900 + user, "user_id": user, "assignment_id": assignment})

    do_GET = do_POST = do_PUT = handle_any


@pytest.fixture
def canvas_server() -> Iterator[tuple[str, list[dict]]]:
    FakeCanvas.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeCanvas)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", FakeCanvas.received
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


CANVAS_CLASS = {
    "smithjane": (CANVAS, "smithjane", {ASSIGNMENT: "1234", SECOND: "1234", "99_renamed": "1234"}),
    "doejohn": (CANVAS, "doejohn", {ASSIGNMENT: "99"}),
    "anon_x1": (CANVAS, "", {ASSIGNMENT: ""}),  # an anonymous download: no user id
    "Ann_Lee": (MOODLE, "Ann Lee", {ASSIGNMENT: "42"}),
}


def test_canvas_feedback_goes_up_as_submission_comment_files(
    tmp_path: Path, throwaway_course: ThrowawayCourse, canvas_server: tuple[str, list[dict]],
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    url, received = canvas_server
    course = throwaway_course(ASSIGNMENT)
    feedback_class(course, CANVAS_CLASS)
    command = ["--root", str(course.root), "export", "--format", CANVAS, "--feedback", "--canvas-url", url,
               "--canvas-course", "7"]
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    with pytest.raises(SystemExit, match=TOKEN_VARIABLE):  # no token: nothing sent
        main(command)
    assert received == []
    monkeypatch.setenv(TOKEN_VARIABLE, FakeCanvas.token)

    assert main(command) == 0

    uploads = [r for r in received if r["path"] == "/files/upload"]
    assert sorted(r["file"] for r in uploads) == sorted([
        (f"{ASSIGNMENT}.html", PAGE.format(student="smithjane")), (f"{SECOND}.html", PAGE.format(student="smithjane")),
        (f"{ASSIGNMENT}.html", PAGE.format(student="doejohn"))])
    assert all(r["auth"] is None and r["form"]["key"] == "token-1" for r in uploads)  # the token stays with Canvas
    comments = [(r["path"], r["form"]["comment[file_ids][]"]) for r in received if r["method"] == "PUT"]
    assert comments == [("/api/v1/courses/7/assignments/11/submissions/99", ["501"]),  # each file's own comment
                        ("/api/v1/courses/7/assignments/11/submissions/1234", ["502"]),
                        ("/api/v1/courses/7/assignments/12/submissions/1234", ["503"])]
    steps = [(r["method"], r["path"]) for r in received if r["path"] != "/files/upload"]
    assert steps[:2] == [("GET", "/api/v1/courses/7"), ("GET", "/api/v1/courses/7/assignments")]
    assert all(r["auth"] == f"Bearer {FakeCanvas.token}" for r in received if r["path"].startswith("/api/"))
    out = capsys.readouterr().out
    assert "4 submissions with feedback" in out
    assert "course 7 has no assignment named 99_renamed" in out  # listed, never sent elsewhere
    assert f"left out, no canvas identifier from collect: Ann_Lee/{ASSIGNMENT}, anon_x1/{ASSIGNMENT}" in out


def test_canvas_dry_run_sends_nothing_and_needs_no_token(
    throwaway_course: ThrowawayCourse, canvas_server: tuple[str, list[dict]], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, received = canvas_server
    course = throwaway_course(ASSIGNMENT)
    feedback_class(course, CANVAS_CLASS)
    monkeypatch.delenv(TOKEN_VARIABLE, raising=False)
    assert main(["--root", str(course.root), "export", "--format", CANVAS, "--feedback", "--dry-run",
                 "--canvas-url", url, "--canvas-course", "7"]) == 0
    assert received == []
    planned = [line for line in capsys.readouterr().out.splitlines() if line.startswith("dry run, not sent: ")]
    assert len(planned) == 4 and f"doejohn/{ASSIGNMENT}/{ASSIGNMENT}.html -> user 99's submission of {ASSIGNMENT}" \
        in planned[0]


def test_the_token_is_never_an_option() -> None:
    with pytest.raises(SystemExit):
        main(["export", "--format", CANVAS, "--feedback", "--canvas-token", "x"])
