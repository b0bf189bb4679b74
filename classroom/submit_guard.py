"""Two questions a student's submit asks before it hands anything in (:mod:`classroom.student_submit` calls it).

1. **Nothing changed?** A hand-in byte for byte the same as the student's last one (the copy nbgrader's
   submit keeps in the student's cache) hands nothing in and says so: the earlier hand-in, and its time,
   stay the ones collected. A second press of *Submit* after the due date no longer turns on-time work
   into late work (nbgrader issue #1171).
2. **Late?** After the student's own due date (the hub's published view: the assignment's due date or
   their extension), the first submit hands nothing in and says when the work was due; a second within
   :data:`CONFIRM_MINUTES` minutes hands it in, late.

Both answers are errors of the submit, in the student's language: the Assignments tab shows them in its
*Invalid Submission* dialog, ``nbgrader submit`` prints them. They protect the student from a slip, not
the course from the student: the time that counts is the one collect reads, and the export's ``late by``
comes from the instructor's own files.
"""

import hashlib
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from jupyter_core.paths import jupyter_data_dir

from classroom.student_view import ENGLISH, StudentView, duration, message, read_view, shown

CONFIRM_MINUTES = 10
MARKS = {"timestamp.txt", "submission_secret.txt"}  # what submit writes beside the notebooks


class SubmitRefused(Exception):
    """The submit handed nothing in; the message says why and what to do."""


def hand_in_digest(folder: Path, ignore: Callable[[str, list[str]], set[str]] | None = None) -> str:
    """A digest of the files a hand-in of ``folder`` holds (their paths and bytes), marks and ignored files left out."""
    sha = hashlib.sha256()
    for root, folders, files in os.walk(folder):
        skipped = set(ignore(root, folders + files)) if ignore else set()
        folders[:] = sorted(name for name in folders if name not in skipped)
        for name in sorted(set(files) - skipped - (MARKS if Path(root) == folder else set())):
            path = Path(root) / name
            sha.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()


def last_hand_in(cache: Path, student: str, assignment: str) -> Path | None:
    """The student's newest hand-in of ``assignment`` in their submit cache (by the time it records)."""
    kept = [folder for folder in cache.glob(f"{student}+{assignment}+*") if (folder / "timestamp.txt").is_file()]
    return max(kept, key=lambda folder: (folder / "timestamp.txt").read_text().strip(), default=None)


def confirmation_file(course: str, assignment: str) -> Path:
    return Path(jupyter_data_dir()) / "tfcourse" / f"late-{course}-{assignment}"


def check_unchanged(source: Path, cache: Path, student: str, assignment: str, ignore, language: str) -> None:
    last = last_hand_in(cache, student, assignment)
    if last is not None and hand_in_digest(last) == hand_in_digest(source, ignore):
        when = (last / "timestamp.txt").read_text().strip()
        raise SubmitRefused(message(language, "same", when=when))


def check_late(view: StudentView, course: str, assignment: str, now: datetime) -> None:
    """Refuse a late submit unless one was refused less than :data:`CONFIRM_MINUTES` minutes ago."""
    deadline = view.deadline(assignment)
    due = deadline.effective if deadline else None
    if due is None or now <= due:
        return
    asked = confirmation_file(course, assignment)
    try:
        confirmed = time.time() - asked.stat().st_mtime <= CONFIRM_MINUTES * 60
    except OSError:
        confirmed = False
    if confirmed:
        asked.unlink()
        return
    asked.parent.mkdir(parents=True, exist_ok=True)
    asked.touch()  # now: an older request's window starts again
    language, zone = view.language, due.tzinfo
    raise SubmitRefused(message(
        language, "late", assignment=assignment, due=shown(due, language),
        now=shown(now.astimezone(zone), language), late=duration((now - due).total_seconds(), language),
        minutes=CONFIRM_MINUTES,
    ))


def check_before_submit(submit) -> None:
    """Called by the student's submit (``PrivateSubmit``) once it knows what it hands in, before anything is written."""
    view = read_view()
    language = view.language if view else ENGLISH
    course, assignment = submit.coursedir.course_id, submit.coursedir.assignment_id
    try:
        check_unchanged(Path(submit.src_path), Path(submit.cache_path), submit.coursedir.student_id, assignment,
                        submit.patterns(), language)
        if view is not None:
            check_late(view, course, assignment, datetime.now(UTC))
    except SubmitRefused as refused:
        reason = str(refused)
    else:
        return
    # Outside the handler, so that the tab's dialog (a traceback) ends on this message alone, unchained.
    submit.fail(reason)  # logged, and raised as nbgrader's ExchangeError
