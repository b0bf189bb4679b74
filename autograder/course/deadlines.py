"""Due dates, set in one place (``due_dates.csv`` at the course root), and how late a submission was.

``due_dates.csv`` has one row per notebook: ``assignment,due``, the due date in ISO 8601 with
its UTC offset (``2026-12-07T23:59:00+08:00``), or empty for no deadline. ``grade`` writes each
due date into the gradebook (nbgrader's ``Assignment.duedate``) and each submission's time into
its ``Submission.timestamp``, so nbgrader's own tools agree; ``export`` gives ``submitted``,
``due`` and ``late by`` columns. A submission's time is its ``timestamp.txt``, which the
course's collect from the hub's exchange writes with the server's time of the hand-in
(:mod:`autograder.pipeline.exchange.exchange_collect`; ngshare stamps its own); an LMS upload has none,
and its lateness is the LMS's to show. A student's own due date (an extension) is set beside it, in
``extensions.csv`` (:mod:`autograder.course.extensions`); the export's ``late by`` counts from it.
"""

import csv
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.utils import parse_utc

from autograder.course.paths import TIMESTAMP_FILE

DUE_DATES_FILE = "due_dates.csv"


class DueDateError(ValueError):
    """``due_dates.csv`` names an unknown notebook or holds a date that cannot be read."""


def read_due_dates(root: Path, assignments: list[str]) -> dict[str, datetime]:
    """``{assignment: due date (UTC)}`` of the assignments that have one."""
    path = Path(root) / DUE_DATES_FILE
    if not path.exists():
        return {}
    due: dict[str, datetime] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            assignment, text = (row.get("assignment") or "").strip(), (row.get("due") or "").strip()
            if assignment not in assignments:
                raise DueDateError(f"{path}:{line}: {assignment!r} is not a notebook of this course ({assignments})")
            if text:
                due[assignment] = parse_due(text, f"{path}:{line}")
    return due


def parse_due(text: str, where: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError as error:
        raise DueDateError(f"{where}: {text!r} is not an ISO 8601 date (2026-12-07T23:59:00+08:00)") from error
    if when.tzinfo is None:
        raise DueDateError(f"{where}: {text!r} has no UTC offset: write it as 2026-12-07T23:59:00+08:00")
    return when.astimezone(UTC)


def submitted_at(submission: Path) -> datetime | None:
    """When nbgrader received the submission in folder ``submission`` (UTC), if it says."""
    path = Path(submission) / TIMESTAMP_FILE
    try:
        return parse_utc(path.read_text().strip()).replace(tzinfo=UTC)
    except (OSError, ValueError):
        return None


def seconds_late(submitted: datetime | None, due: datetime | None) -> float | None:
    """Seconds after the due date (0.0 when on time); None when either time is unknown."""
    if submitted is None or due is None:
        return None
    return max(0.0, (submitted - due).total_seconds())


def late_text(seconds: float | None) -> str:
    """``""`` (unknown), ``"on time"``, or how late in the two largest units: ``"1 d 3 h"``, ``"4 min 10 s"``."""
    if seconds is None:
        return ""
    if seconds <= 0:
        return "on time"
    rest, amounts = max(1, round(seconds)), []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        amounts.append((rest // size, unit))
        rest %= size
    largest = next(index for index, (amount, _) in enumerate(amounts) if amount)
    return " ".join(f"{amount} {unit}" for amount, unit in amounts[largest : largest + 2] if amount)
