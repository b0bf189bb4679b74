"""The hub's ``student-view`` service: each student's due dates, extension and edition, published for them alone.

Students cannot read the course folder (``due_dates.csv``, ``extensions.csv``), nor the hub's state (the roster's
languages, written by :mod:`classroom.roster`). This service, which JupyterHub starts and stops with itself, reads
them as root every ``--every`` seconds and writes ``<prefix>/student-view/<student>.json`` for every member of the
students' group, when it changed (who may read it: docs/running-a-class.md); each student's server turns it into
``~/DUE_DATES.md`` (:mod:`classroom.due_dates_view`). A service, not a step of the instructor's: a changed date
reaches every student within a minute, with nothing to run. An unreadable file (a date that does not parse, a link) is
reported in the hub's log and the last good views stay published.
"""

import argparse
import csv
import grp
import logging
import os
import pwd
import tempfile
import time
from datetime import UTC, datetime, tzinfo
from pathlib import Path

from autograder import logs
from autograder.course.deadlines import DUE_DATES_FILE, DueDateError, read_due_dates
from autograder.course.extensions import EXTENSIONS_FILE, read_extensions
from autograder.course.settings import assignment_ids
from classroom.accounts import recorded
from classroom.layout import DEFAULT_PREFIX, STUDENTS, HubLayout, members
from classroom.roster import LANGUAGES_FILE
from classroom.student_view import ENGLISH, LANGUAGES, VIEW_FOLDER, Deadline, StudentView

log = logging.getLogger(__name__)

def views(course: Path, languages: dict[str, str], students: list[str]) -> dict[str, StudentView]:
    """Each student's view of the course at ``course`` (raises :class:`DueDateError` on a bad file)."""
    for name in (DUE_DATES_FILE, EXTENSIONS_FILE):
        if (course / name).is_symlink():
            raise DueDateError(f"{course / name} is a link: write the file itself")
    assignments = assignment_ids(course)
    due_dates = read_due_dates(course, assignments)
    extensions = read_extensions(course, assignments, due_dates)
    zones = written_zones(course / DUE_DATES_FILE)
    published = {}
    for student in students:
        deadlines = []
        for assignment in assignments:
            zone = zones.get(assignment, UTC)
            due, own = due_dates.get(assignment), extensions.get((student, assignment))
            deadlines.append(Deadline(assignment, due and due.astimezone(zone), own and own.astimezone(zone)))
        language = languages.get(student, ENGLISH)
        published[student] = StudentView(language if language in LANGUAGES else ENGLISH, deadlines)
    return published


def written_zones(path: Path) -> dict[str, tzinfo]:
    """The UTC offset each due date is written in: the students see the times as the instructor wrote them."""
    if not path.exists():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [(row.get("assignment") or "", (row.get("due") or "").strip()) for row in csv.DictReader(handle)]
    return {assignment.strip(): datetime.fromisoformat(text).tzinfo for assignment, text in rows if text}


def publish(folder: Path, published: dict[str, StudentView]) -> list[str]:
    """Write each student's view where it changed (as root); the students whose view was written.

    The view of an account no longer among the students is removed: its group's id may be given to a new account.
    """
    folder.mkdir(mode=0o711, exist_ok=True)
    os.chown(folder, 0, 0)
    folder.chmod(0o711)
    for stale in folder.glob("*.json"):
        if stale.stem not in published:
            stale.unlink()
    written = []
    for student, view in published.items():
        path, text = folder / f"{student}.json", view.to_json()
        if path.exists() and not path.is_symlink() and path.read_text(encoding="utf-8") == text:
            continue
        account = pwd.getpwnam(student)
        own_group = grp.getgrgid(account.pw_gid).gr_name == student
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{student}.")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        # Their own group's, else theirs alone (they could then change their own view, which only they see).
        os.chown(temporary, 0, account.pw_gid) if own_group else os.chown(temporary, account.pw_uid, 0)
        os.chmod(temporary, 0o640 if own_group else 0o400)
        os.replace(temporary, path)
        written.append(student)
    return written


def look_once(layout: HubLayout, state: Path) -> str:
    """Publish what changed; the line for the hub's log ("" when nothing changed). A file that cannot be read
    publishes nothing: the last good views stay."""
    try:
        published = views(layout.course, recorded(state, LANGUAGES_FILE), sorted(members(STUDENTS)))
        written = publish(layout.prefix / VIEW_FOLDER, published)
    except (DueDateError, OSError, ValueError) as error:
        return f"student-view: kept the last published due dates: {error}"
    return f"student-view: published {len(written)} students' due dates" if written else ""


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m classroom.publish_student_view", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--prefix", type=Path, default=DEFAULT_PREFIX)
    parser.add_argument("--state", type=Path, help="the hub's state folder (default: state/ under the prefix)")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between two looks (default 30)")
    args = logs.parse_args(parser)
    layout = HubLayout(args.prefix)
    state = args.state or layout.state
    while True:
        said = look_once(layout, state)
        if said:
            log.info(said)
        time.sleep(args.every)


if __name__ == "__main__":
    main()
