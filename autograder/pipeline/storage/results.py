"""The grader's own record of one graded submission, kept next to nbgrader's gradebook.

nbgrader's gradebook stores scores but cannot say *why* a submission has 0 points
(missing, unreadable, timed out, crashed, tampered with ...). Each graded submission
gets one JSON file ``grading/results/<assignment>/<student>.json`` that `export`,
`feedback` and `report` read, and that makes `grade` resumable.
"""

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from pathlib import Path

from autograder.course.course import Course
from autograder.course.notebooks import is_extra_credit


class Status(StrEnum):
    GRADED = "graded"
    MISSING = "missing"
    UNREADABLE = "unreadable"
    TIMED_OUT = "timed out"
    CRASHED = "crashed"
    FLAGGED = "flagged"


@dataclass
class TestResult:
    """One graded test cell: the kernel's score, the clean re-run's verdict and what was awarded."""

    notebook: str
    grade_id: str
    max_score: float
    kernel_score: float = 0.0
    clean_passed: bool | None = None  # None: no clean re-run happened for this cell
    score: float = 0.0
    message: str = ""  # the failure message ("AssertionError: ..."), empty when passed

    @property
    def extra_credit(self) -> bool:
        """A test of an optional exercise: its points come on top of full marks."""
        return is_extra_credit(self.grade_id)


@dataclass
class SubmissionResult:
    assignment: str
    student: str
    status: Status
    reason: str = ""
    digest: str = ""  # of the submitted files, to know whether a re-grade is needed
    seconds: float = 0.0
    tests: list[TestResult] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # a notebook taken under a copy's name; notebook files ignored
    phases: dict[str, float] = field(default_factory=dict)  # seconds per step of the job (see grade --profile)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> "SubmissionResult":
        data = json.loads(text)
        data["status"] = Status(data["status"])
        data["tests"] = [TestResult(**t) for t in data["tests"]]
        return cls(**data)


@contextmanager
def timed(phases: dict[str, float], name: str) -> Iterator[None]:
    """Add the seconds the ``with`` block takes to ``phases[name]``."""
    start = time.monotonic()
    try:
        yield
    finally:
        phases[name] = phases.get(name, 0.0) + time.monotonic() - start


def result_path(course: Course, assignment: str, student: str) -> Path:
    return course.grading.results() / assignment / f"{student}.json"


def save_result(course: Course, result: SubmissionResult) -> Path:
    path = result_path(course, result.assignment, result.student)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.to_json())
    return path


def load_result(course: Course, assignment: str, student: str) -> SubmissionResult | None:
    path = result_path(course, assignment, student)
    return SubmissionResult.from_json(path.read_text()) if path.exists() else None


def load_results(course: Course) -> list[SubmissionResult]:
    return [SubmissionResult.from_json(p.read_text()) for p in sorted(course.grading.results().glob("*/*.json"))]


def folder_digest(folder: Path) -> str:
    """SHA-256 over the names and bytes of every file under ``folder`` (empty string if absent)."""
    if not folder.is_dir():
        return ""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
