"""The two files nbgrader's submit writes beside a hand-in's notebooks, read without trusting them.

``timestamp.txt`` (when) and ``submission_secret.txt`` (a random secret, 128 hexadecimal digits:
``secrets.token_hex(64)`` in nbgrader's submit and in :mod:`classroom.student_submit`) travel
from the hand-in to its feedback folder; ``nbgrader release_feedback`` names each released page
by a hash of the secret and the notebook's name, and the student's ``fetch_feedback`` finds it
by the same hash from its own copy of the secret. Both files are written by the student's
account, so either may be missing, a folder, a link, huge or not text. Each rule broken here is a
:class:`BadMark` whose message names the file and what is wrong with it, never its content: the
secret is what keeps a student's feedback page from everyone else.
"""

import os
import re
import stat
from pathlib import Path

from autograder.course.paths import TIMESTAMP_FILE
from autograder.pipeline.exchange.handins import RefusedHandin, kind_of, safe_name

SECRET_FILE = "submission_secret.txt"
# What both submits write; read as nbgrader's fetch_feedback reads it (the whole file, no whitespace
# stripped), so a secret with a newline would give the instructor and the student different hashes.
SECRET = re.compile(r"[0-9a-f]{32,1024}")
MAX_MARK_BYTES = 4096


class BadMark(RefusedHandin):
    """A mark is missing or malformed: the message says which and how (never what it holds)."""


def read_mark(folder: Path, name: str) -> str:
    """The text of the mark ``name`` in ``folder``: a plain file (no link, no folder) of UTF-8 text, not too long."""
    try:  # O_NONBLOCK: a named pipe put in its place must not hang the reader
        handle = os.open(Path(folder) / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise BadMark(f"no {name}") from None
    except OSError as error:  # ELOOP: a symbolic link
        raise BadMark(f"{name} could not be opened ({error.strerror})") from None
    try:
        mode = os.fstat(handle).st_mode
        if stat.S_ISDIR(mode):
            raise BadMark(f"{name} is a folder where nbgrader's submit writes a file")
        if not stat.S_ISREG(mode):
            raise BadMark(f"{name} is {kind_of(mode)}, not a plain file")
        data = os.read(handle, MAX_MARK_BYTES + 1)
    finally:
        os.close(handle)
    if len(data) > MAX_MARK_BYTES:
        raise BadMark(f"{name} has more than {MAX_MARK_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadMark(f"{name} is not UTF-8 text") from None


def read_secret(folder: Path) -> str:
    """The hand-in's secret, exactly as nbgrader hashes it."""
    secret = read_mark(folder, SECRET_FILE)
    if not SECRET.fullmatch(secret):
        raise BadMark(f"{SECRET_FILE} is not a secret as nbgrader's submit writes it (32 to 1024 hexadecimal digits, "
                      "nothing else)")
    return secret


def check_handin_marks(folder: Path) -> None:
    """Raise :class:`BadMark` unless the hand-in copied to ``folder`` can travel to grading and back as feedback.

    Its secret must be well formed (without it the feedback page cannot be named for the student);
    ``timestamp.txt`` may be missing (collect writes the server's time) but not be a folder; no
    folder may take a notebook's name (nbgrader's steps read every ``*.ipynb`` as a file).
    """
    read_secret(folder)
    if (Path(folder) / TIMESTAMP_FILE).is_dir():
        raise BadMark(f"{TIMESTAMP_FILE} is a folder where nbgrader's submit writes a file")
    for entry in sorted(Path(folder).glob("*.ipynb")):
        if entry.is_dir():
            raise BadMark(f"{safe_name(entry.name)} is a folder where a notebook belongs")
