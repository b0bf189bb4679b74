"""``python -m classroom.roster ROSTER.csv``: a system user for every student of a roster (run as root).

The roster is a CSV file with a ``student`` column (or ``id``), holding the ids that ``collect``
and ``export`` use (and, with LTI, what the LMS sends as the launch's username). Each student
gets a private home (700) in the group ``tfcourse-students``. With ``--passwords`` (PAM login)
each new student gets a random password, written to ``state/initial_passwords.csv`` (readable by
root only) for the instructor to hand out; with LTI the LMS logs them in and no password is set.

An optional ``language`` column (``en`` or ``zh``, empty: English) gives each student their edition: a
``zh`` student's *Fetch* gives the Chinese notebook (:mod:`classroom.fetch_edition`) and their
``DUE_DATES.md`` is in Chinese. It is kept in the hub's state (``state/languages.json``, root only), which
the hub's ``student-view`` service publishes to each student; running the script again updates it.
"""

import argparse
import csv
import logging
import secrets
from pathlib import Path

from autograder import logs
from classroom.accounts import record_created, recorded, write_record
from classroom.layout import DEFAULT_PREFIX, STUDENTS, HubLayout
from classroom.student_view import ENGLISH, LANGUAGES
from classroom.system_users import VALID_NAME, ensure_user, set_password

log = logging.getLogger(__name__)
ID_COLUMNS = ("student", "id")
LANGUAGES_FILE = "languages.json"  # in the hub's state folder: {student: edition code}


def read_roster(path: Path) -> list[str]:
    """The student ids of ``path``, checked, in order, each once."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    column = next((name for name in ID_COLUMNS if rows and name in rows[0]), None)
    if column is None:
        raise SystemExit(f"{path}: no 'student' (or 'id') column")
    ids = [row[column].strip() for row in rows if row[column].strip()]
    bad = [student for student in ids if not VALID_NAME.match(student)]
    if bad:
        raise SystemExit(f"{path}: not usable as system user names: {', '.join(bad)} (see classroom/system_users.py)")
    return list(dict.fromkeys(ids))


def read_languages(path: Path) -> dict[str, str]:
    """``{student: language}`` from the roster's ``language`` column (none: ``{}``; empty: English)."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or "language" not in rows[0]:
        return {}
    column = next(name for name in ID_COLUMNS if name in rows[0])
    languages = {}
    for line, row in enumerate(rows, start=2):
        student, language = row[column].strip(), (row["language"] or "").strip().lower() or ENGLISH
        if language not in LANGUAGES:
            raise SystemExit(f"{path}:{line}: language {language!r} for {student}: use one of {', '.join(LANGUAGES)}")
        if student:
            languages[student] = language
    return languages


def save_languages(state: Path, languages: dict[str, str]) -> None:
    """Merge ``languages`` into the hub's ``state/languages.json`` (root only), which the student-view service reads."""
    write_record(state, {**recorded(state, LANGUAGES_FILE), **languages}, LANGUAGES_FILE)


def add_students(layout: HubLayout, students: list[str], passwords: bool) -> dict[str, str]:
    """Make each student's account; the new passwords, by student (none without ``passwords``)."""
    given = {}
    for student in students:
        if ensure_user(student, STUDENTS):
            record_created(layout.state, student)  # provision --remove-accounts removes it at the class's end
            if passwords:
                given[student] = secrets.token_urlsafe(9)
                set_password(student, given[student])
    if given:
        path = layout.state / "initial_passwords.csv"
        write_header = not path.exists()
        with path.open("a", newline="") as handle:
            writer = csv.writer(handle)
            if write_header:
                writer.writerow(["student", "password"])
            writer.writerows(given.items())
        path.chmod(0o600)
    return given


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m classroom.roster", description=__doc__.splitlines()[0])
    parser.add_argument("roster", type=Path)
    parser.add_argument(
        "--prefix", type=Path, default=DEFAULT_PREFIX, help=f"the hub's prefix (default {DEFAULT_PREFIX})"
    )
    parser.add_argument("--passwords", action="store_true", help="give each new student a password (PAM login)")
    args = logs.parse_args(parser)
    students = read_roster(args.roster)
    given = add_students(HubLayout(args.prefix), students, args.passwords)
    languages = read_languages(args.roster)
    if languages:
        save_languages(HubLayout(args.prefix).state, languages)
        log.info(f"editions: {sum(lang != ENGLISH for lang in languages.values())} students get the Chinese notebooks")
    log.info(f"{len(students)} students in the roster, {len(given)} new passwords")
    if given:
        log.info(f"passwords: {HubLayout(args.prefix).state / 'initial_passwords.csv'} (root only)")


if __name__ == "__main__":
    main()
