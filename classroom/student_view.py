"""What the hub tells one student about their course: their edition's language, each due date and their own.

The hub's ``student-view`` service (:mod:`classroom.publish_student_view`, run as root) publishes one
file per student, ``<prefix>/student-view/<student>.json``, readable by that student alone; the folder
is named to every server in ``TFCOURSE_STUDENT_VIEW``. This module reads it, as the student, for the
three places that use it: ``~/DUE_DATES.md`` (:mod:`classroom.due_dates_view`), the edition a fetch
gives (:mod:`classroom.fetch_edition`) and the question a late submit asks (:mod:`classroom.submit_guard`).
What it says is a courtesy to the student: the export's ``late by`` is computed from the instructor's
own files, whatever a student's account does to this one.
"""

import getpass
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tfcourse.registry import editions, source

VIEW_VARIABLE = "TFCOURSE_STUDENT_VIEW"
VIEW_FOLDER = "student-view"  # under the hub's prefix
LOCALE = Path(__file__).with_name("locale")  # the hub's message catalogs
ENGLISH = source()
LANGUAGES = tuple(editions())

MESSAGES = {  # in English; a translated edition's are in classroom/locale/<code>/hub.po
    "title": "Due dates",
    "columns": "| assignment | due | your due date |",
    "none": "no due date",
    "extended": "{when} (your extension)",
    "footer": (
        "Your instructor sets these dates; a hand-in after your due date is marked late, "
        "and Submit asks you to confirm it first. The hub rewrites this file when a date changes: edits are lost."
    ),
    "late": (
        "{assignment} was due {due}.\nIt is now {now}: this hand-in would be {late} late.\n"
        "Nothing was handed in. To hand it in late anyway, press Submit again within {minutes} minutes."
    ),
    "same": (
        "Nothing changed since your hand-in of {when}:\n"
        "that hand-in is kept, with its time, and nothing new was handed in."
    ),
    "units": {"d": "{amount} d", "h": "{amount} h", "min": "{amount} min"},
}


@dataclass(frozen=True)
class Deadline:
    assignment: str
    due: datetime | None  # the assignment's, in the offset the instructor wrote it in
    own_due: datetime | None = None  # the student's extension, if any

    @property
    def effective(self) -> datetime | None:
        return self.own_due or self.due


@dataclass(frozen=True)
class StudentView:
    language: str = ENGLISH
    deadlines: list[Deadline] = field(default_factory=list)

    def deadline(self, assignment: str) -> Deadline | None:
        return next((deadline for deadline in self.deadlines if deadline.assignment == assignment), None)

    def to_json(self) -> str:
        rows = [
            {"assignment": d.assignment, "due": _iso(d.due), "own_due": _iso(d.own_due)} for d in self.deadlines
        ]
        return json.dumps({"language": self.language, "deadlines": rows}, ensure_ascii=False, indent=1) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "StudentView":
        data = json.loads(text)
        language = data.get("language") if data.get("language") in LANGUAGES else ENGLISH
        deadlines = [
            Deadline(str(row["assignment"]), _parse(row.get("due")), _parse(row.get("own_due")))
            for row in data.get("deadlines", [])
        ]
        return cls(language, deadlines)


def _iso(when: datetime | None) -> str | None:
    return when.isoformat(timespec="minutes") if when else None


def _parse(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def view_file(student: str, folder: Path | None = None) -> Path | None:
    """Where the hub publishes ``student``'s view (None where no hub names the folder)."""
    folder = folder or (Path(os.environ[VIEW_VARIABLE]) if os.environ.get(VIEW_VARIABLE) else None)
    return folder / f"{student}.json" if folder else None


def read_view(student: str | None = None, folder: Path | None = None) -> StudentView | None:
    """This account's view (or ``student``'s), or None: no hub, nothing published yet, or unreadable."""
    path = view_file(student or getpass.getuser(), folder)
    if path is None:
        return None
    try:
        return StudentView.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def say(language: str, text: str, **fields: object) -> str:
    """``text`` (English) in ``language``, from the hub's catalogs (``classroom/locale``), its fields filled in."""
    from tfcourse.messages import say  # the hub process imports this module for its names alone
    return say(language, text, LOCALE, **fields)


def message(language: str, key: str, **fields: object) -> str:
    return say(language, MESSAGES[key], **fields)


def shown(when: datetime | None, language: str = ENGLISH) -> str:
    """``2026-12-07 23:59 (UTC+08:00)``: the time as the instructor's offset writes it."""
    if when is None:
        return message(language, "none")
    offset = when.utcoffset()
    zone = "UTC" if not offset else f"UTC{when.strftime('%z')[:3]}:{when.strftime('%z')[3:]}"
    return f"{when.strftime('%Y-%m-%d %H:%M')} ({zone})"


def duration(seconds: float, language: str = ENGLISH) -> str:
    """The two largest of days, hours and minutes: ``1 d 3 h``, ``4 min`` (at least a minute)."""
    rest, amounts = max(60, round(seconds)), []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        amounts.append((rest // size, unit))
        rest %= size
    largest = next(index for index, (amount, _) in enumerate(amounts) if amount)
    units = MESSAGES["units"]
    return " ".join(say(language, units[unit], amount=n) for n, unit in amounts[largest : largest + 2] if n)


def due_dates_markdown(view: StudentView) -> str:
    """``DUE_DATES.md``: each assignment's due date and the student's own, in the student's language."""
    language = view.language
    lines = [f"# {message(language, 'title')}", "", message(language, "columns"), "| --- | --- | --- |"]
    for deadline in view.deadlines:
        own = (
            message(language, "extended", when=shown(deadline.own_due, language))
            if deadline.own_due
            else shown(deadline.due, language)
        )
        lines.append(f"| {deadline.assignment} | {shown(deadline.due, language)} | {own} |")
    lines += ["", message(language, "footer"), ""]
    return "\n".join(lines)
