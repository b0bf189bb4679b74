"""Per-student extensions, set beside ``due_dates.csv`` in ``extensions.csv``: each student's own due date.

One row per extension: ``student,assignment,due``, where ``due`` is either a new due date (ISO 8601
with its UTC offset, as in ``due_dates.csv``: ``2026-12-09T23:59:00+08:00``) or a delay after the
assignment's due date (``+48h``, ``+2d``). A student without a row keeps the assignment's due date.
The export's ``due`` and ``late by`` columns use the student's own due date; the hub shows it to the
student (``classroom/publish_student_view.py``).
"""

import csv
import re
from datetime import datetime, timedelta
from pathlib import Path

from autograder.course.deadlines import DueDateError, parse_due

EXTENSIONS_FILE = "extensions.csv"
DELAY = re.compile(r"^\+\s*(\d+(?:\.\d+)?)\s*([hd])$")  # +48h, +2d, +1.5d
DELAY_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1)}


def read_extensions(
    root: Path, assignments: list[str], due_dates: dict[str, datetime]
) -> dict[tuple[str, str], datetime]:
    """``{(student, assignment): the student's own due date (UTC)}`` from ``root/extensions.csv`` (none: ``{}``)."""
    path = Path(root) / EXTENSIONS_FILE
    if not path.exists():
        return {}
    extended: dict[tuple[str, str], datetime] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            where = f"{path}:{line}"
            student, assignment = (row.get("student") or "").strip(), (row.get("assignment") or "").strip()
            text = (row.get("due") or "").strip()
            if not student:
                raise DueDateError(f"{where}: no student (the columns are student,assignment,due)")
            if assignment not in assignments:
                raise DueDateError(f"{where}: {assignment!r} is not a notebook of this course ({assignments})")
            if (student, assignment) in extended:
                raise DueDateError(f"{where}: a second extension for {student} on {assignment}: keep one row")
            extended[(student, assignment)] = extended_due(text, due_dates.get(assignment), where)
    return extended


def extended_due(text: str, due: datetime | None, where: str) -> datetime:
    """A new due date, or the assignment's due date plus a delay (``+48h``, ``+2d``)."""
    delay = DELAY.match(text)
    if not delay:
        return parse_due(text, where)
    if due is None:
        raise DueDateError(f"{where}: {text!r} extends a due date that due_dates.csv does not set: write a date")
    return due + float(delay.group(1)) * DELAY_UNITS[delay.group(2)]


def due_for(
    student: str, assignment: str, due_dates: dict[str, datetime], extensions: dict[tuple[str, str], datetime]
) -> datetime | None:
    """The student's own due date of ``assignment``: their extension, else the assignment's (None: no deadline)."""
    return extensions.get((student, assignment), due_dates.get(assignment))


def extension_of(
    student: str, assignment: str, due_dates: dict[str, datetime], extensions: dict[tuple[str, str], datetime]
) -> timedelta | None:
    """The student's extension past the assignment's due date, as nbgrader's gradebook keeps it (None: none)."""
    extended, due = extensions.get((student, assignment)), due_dates.get(assignment)
    return extended - due if extended is not None and due is not None else None
