"""The collect from ngshare checks each submission on its own: one student's malformed upload stops nobody else.

:func:`checked_files` is proven on ngshare's own file lists (``[{"path", "content"}]``, base64), the
shapes ngshare accepts (it checks only that a path stays inside the submission). The collect
class runs here against ngshare's answers served from memory, in the format of ngshare 0.6.0's
API; the real service, the hub and the instructor's own ``nbgrader collect`` are proven in
tests/browser/test_classroom_hub_ngshare.py.
"""

import base64
import os
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory

from autograder.course.course import Course
from autograder.course.deadlines import submitted_at
from autograder.pipeline.exchange.handins import MAX_DEPTH, HandinLimits, RefusedHandin
from autograder.pipeline.storage.refusals import load_refusals

ASSIGNMENT = "01_attention"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
os.environ.setdefault("JUPYTERHUB_USER", "instructor")  # ngshare_exchange reads it (or USER) on import

from autograder.pipeline.exchange.ngshare_collect import SafeNgshareCollect, checked_files  # noqa: E402


def entry(path: str, data: bytes = b"{}") -> dict[str, str]:
    return {"path": path, "content": base64.encodebytes(data).decode()}  # as ngshare sends a file


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ([entry("timestamp.txt/x"), entry(NOTEBOOK)], "timestamp.txt is a folder where nbgrader reads a file"),
        ([entry("submission_secret.txt/x")], "submission_secret.txt is a folder where nbgrader reads a file"),
        ([entry(f"{NOTEBOOK}/cells")], f"{NOTEBOOK} is a folder where nbgrader reads a file"),
        ([entry("notes"), entry("notes/a.txt")], "notes is both a file and a folder"),
        ([entry(NOTEBOOK), entry(NOTEBOOK)], "the same path twice"),
        ([entry("../outside")], "leaves the hand-in"),
        ([entry("/etc/passwd")], "leaves the hand-in"),
        ([entry("a//b")], "leaves the hand-in"),
        ([entry("forged\nRefused nothing")], "control characters"),
        ([entry("/".join(["d"] * (MAX_DEPTH + 1) + ["f"]))], f"nested more than {MAX_DEPTH} deep"),
        ([entry(f"f{i}") for i in range(4)], "more than 3 files and folders"),
        ([entry("d/e/f"), entry("g")], "more than 3 files and folders"),  # folders count as copy_handin counts them
        ([entry(NOTEBOOK, b"x" * 11)], "more than 10 bytes"),
        ([{"path": NOTEBOOK, "content": "not base64 !"}], "not base64"),
        ([{"path": NOTEBOOK}], "not base64"),
        ([{"content": ""}], "without a path"),
        ({"path": NOTEBOOK}, "no list of files"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_malformed_submission_is_refused_whole_with_its_reason(files: object, reason: str) -> None:
    limits = HandinLimits(max_bytes=10, max_files=3)
    with pytest.raises(RefusedHandin, match=reason.replace("\n", "\\n")):
        checked_files(files, limits)


def test_a_plain_submission_passes_with_its_folders() -> None:
    files = checked_files([entry(NOTEBOOK, b"NB"), entry("data/x.csv", b"1,2")], HandinLimits(max_files=3))
    assert {str(path): data for path, data in files.items()} == {NOTEBOOK: b"NB", "data/x.csv": b"1,2"}


class Ngshare:
    """ngshare's answers to the instructor's client (format of ngshare 0.6.0), and the downloads asked for."""

    def __init__(self) -> None:
        self.submissions: list[tuple[str, str, list[dict]]] = []  # (student, time, files), oldest first
        self.downloads: list[tuple[str, str]] = []

    def submit(self, student: str, files: list[dict], time: str = "") -> None:
        self.submissions.append((student, time or f"2026-11-28 10:00:{len(self.submissions):02d}.000001", files))

    def get(self, url: str, params: dict | None = None) -> dict | None:
        parts = url.strip("/").split("/")
        if parts[0] == "submissions":
            listed = [{"student_id": student, "timestamp": time} for student, time, _ in self.submissions]
            return {"success": True, "submissions": listed}
        student, time = parts[3], (params or {})["timestamp"]
        self.downloads.append((student, time))
        return next({"success": True, "files": files, "timestamp": time}
                    for who, when, files in self.submissions if (who, when) == (student, time))


def ngshare_collect(course: Course, ngshare: Ngshare, student: str = "", **limits: int) -> SafeNgshareCollect:
    config = course.config()
    for name, value in limits.items():  # the filesystem collect's settings: one for both exchanges
        setattr(config.SafeExchangeCollect, name, value)
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT
    coursedir.student_id = student or "*"
    app = SafeNgshareCollect(coursedir=coursedir, authenticator=Authenticator(config=config), config=config)
    app.ngshare_api_get = ngshare.get  # ngshare_exchange's client, answered from memory
    app.update = True
    app.start()
    return app


def test_one_malformed_submission_stops_nobody_and_the_latest_good_one_counts(throwaway_course) -> None:
    course = throwaway_course(ASSIGNMENT, release=False)
    ngshare = Ngshare()
    ngshare.submit("ann", [entry(NOTEBOOK, b"ANN")])
    ngshare.submit("mal", [entry(NOTEBOOK, b"MAL GOOD")])
    ngshare.submit("mal", [entry("timestamp.txt/x"), entry(NOTEBOOK, b"MAL LATER")])  # broke ngshare's collect
    ngshare.submit("cy", [entry(f"{NOTEBOOK}/x")])
    ngshare.submit("dee", [entry(NOTEBOOK, b"DEE")])
    ngshare.submit("ann", [entry(NOTEBOOK, b"ANN LATER")])  # two good ones: the latest counts
    only_mal = ngshare_collect(course, ngshare, student="mal")  # --student: one student, whatever the others hold
    assert [student for student, _ in ngshare.downloads] == ["mal", "mal"]
    assert not course.grading.submitted("ann", ASSIGNMENT).exists() and [r.student for r in only_mal.refused] == ["mal"]
    ngshare_collect(course, ngshare)
    read = {s: (course.grading.submitted(s, ASSIGNMENT) / NOTEBOOK) for s in ("ann", "mal", "cy", "dee")}
    assert {s: path.read_bytes() for s, path in read.items() if path.exists()} == {
        "ann": b"ANN LATER", "mal": b"MAL GOOD", "dee": b"DEE"}
    assert str(submitted_at(read["mal"].parent)) == "2026-11-28 10:00:01.000001+00:00"  # ngshare's time, the server's
    refused = {
        r.found.replace(f"+{ASSIGNMENT}+2026-11-28 10:00:", " "): r.reason for r in load_refusals(course.grading.path)
    }
    assert refused == {
        "mal 02.000001": "timestamp.txt is a folder where nbgrader reads a file",
        "cy 03.000001": f"{NOTEBOOK} is a folder where nbgrader reads a file",
    }
    assert not list(course.grading.path.glob(".collect-*")), "the staging folder was left behind"
    ngshare.downloads.clear()
    ngshare_collect(course, ngshare)  # nothing newer: no collected submission is downloaded again
    assert sorted(student for student, _ in ngshare.downloads) == ["cy", "mal"], ngshare.downloads


def test_the_collected_submission_holds_nothing_but_what_was_checked(throwaway_course, tmp_path: Path) -> None:
    course = throwaway_course(ASSIGNMENT, release=False)
    ngshare = Ngshare()
    ngshare.submit("ann", [entry(NOTEBOOK, b"ANN"), entry("timestamp.txt", b"2000-01-01 00:00:00.000000 UTC")])
    ngshare_collect(course, ngshare)
    collected = course.grading.submitted("ann", ASSIGNMENT)
    assert sorted(p.name for p in collected.iterdir()) == [NOTEBOOK, "timestamp.txt"]
    assert submitted_at(collected).year == 2026, "the student's claimed time replaced ngshare's"


def test_the_filesystem_collect_s_limits_are_the_ngshare_collect_s(throwaway_course) -> None:
    course = throwaway_course(ASSIGNMENT, release=False)
    ngshare = Ngshare()
    ngshare.submit("ann", [entry(NOTEBOOK, b"x" * 100)])
    app = ngshare_collect(course, ngshare, max_bytes=99)
    assert [r.reason for r in app.refused] == ["more than 99 bytes (the limit the instructor set)"]
    assert not course.grading.submitted("ann", ASSIGNMENT).exists()


def test_a_flood_costs_collect_max_handins_downloads_and_odd_listings_are_refused(throwaway_course) -> None:
    course = throwaway_course(ASSIGNMENT, release=False)
    ngshare = Ngshare()
    for number in range(5):
        ngshare.submit("ann", [entry("timestamp.txt/x")] if number else [entry(NOTEBOOK, b"ANN FIRST")])
    ngshare.submit("../escape", [entry(NOTEBOOK)])  # ngshare's ids are the hub's names: trusted no more
    ngshare.submit("bob", [entry(NOTEBOOK)], time="not a time")
    app = ngshare_collect(course, ngshare, max_handins=2)
    assert len(ngshare.downloads) == 2, ngshare.downloads  # the newest two of ann's five, both refused
    reasons = [refusal.reason for refusal in app.refused]
    assert sorted(set(reasons)) == [
        "3 older hand-ins not looked at: collect looks at the newest 2 only (SafeExchangeCollect.max_handins)",
        "its student id is not a folder name",
        "ngshare listed it without a time",
        "timestamp.txt is a folder where nbgrader reads a file",
    ] and len(reasons) == 5, reasons  # one record for the three older ones
    assert not (course.grading.path / "escape").exists() and not course.grading.submitted("ann", ASSIGNMENT).exists()
