"""Which file of a hand-in is a notebook: the notebook's own name, or a name an LMS or a browser gives a copy.

A student hands in ``01_attention.ipynb``, but the file that arrives often bears a copy's name:

- a browser saving a download whose name is taken inserts `` (N)`` before the extension (Chromium:
  ``base::GetUniquePath`` in base/files/file_util.cc, the suffix format ``" (%d)"``), or ``(N)``
  without the space (Firefox: ``DownloadPaths.createNiceUniqueFile`` in toolkit/components/downloads);
- Moodle renames an upload whose name is taken in the same way, ``name (1).ext``, ``name (2).ext``
  (``file_storage::get_unused_filename`` in lib/filestorage/file_storage.php of moodle/moodle);
- Canvas renames a file whose name is taken with ``-N`` before the extension, N from 1
  (``Attachment.make_unique_filename`` in app/models/attachment.rb of instructure/canvas-lms):
  a file submitted again, copied into the student's submissions folder beside the earlier one
  (``copy_to_folder!``, which renames duplicates), and two entries of one name in the
  *Download Submissions* zip (``add_attachment_to_zip`` in lib/content_zipper.rb); so
  ``01_attention-1.ipynb``, ``01_attention-2.ipynb``, and ``01_attention (1)-1.ipynb`` for a
  browser's copy submitted twice.

The LMS downloads' per-student prefixes are :mod:`autograder.pipeline.commands.collect`'s business; here is the
notebook's part of a name, and which file of a hand-in folder ``grade`` and ``sanitize`` take (which copy ranks
first: docs/instructors.md, Copies' names; Canvas's ``-N`` counts before a browser's ``(N)``, as Canvas numbers a
name that may already hold one). A name is a student's text: it is matched, never used as a path beyond the one
folder, and shown through :func:`~autograder.pipeline.exchange.handins.safe_name`.
"""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.pipeline.exchange.handins import safe_name

NOTEBOOK_SUFFIX = ".ipynb"
# A browser's or Moodle's " (N)" (Firefox's "(N)"), then Canvas's "-N"; at most 9 digits: a number, not a payload.
COPY_SUFFIX = r"(?: ?\((?P<copy>\d{1,9})\))?(?:-(?P<reupload>\d{1,9}))?"


def copy_pattern(notebook: str) -> str:
    """A regular expression (unanchored) for the file name of ``notebook`` and of its copies."""
    return re.escape(notebook) + COPY_SUFFIX + re.escape(NOTEBOOK_SUFFIX)


@dataclass(frozen=True, order=True)
class CopyRank:
    """How a file name ranks among a notebook's copies: its own name above any copy, then higher numbers."""

    own_name: bool
    reupload: int = 0  # Canvas's -N
    copy: int = 0  # a browser's or Moodle's (N)

    @classmethod
    def of(cls, found: re.Match[str]) -> "CopyRank":
        """The rank of a match of :func:`copy_pattern`."""
        reupload, copy = found.group("reupload"), found.group("copy")
        return cls(reupload is None and copy is None, int(reupload or 0), int(copy or 0))


def shown(name: str) -> str:
    """A student's file name as a message quotes it: escaped, in quotes."""
    return repr(safe_name(name))


@dataclass
class HandinFiles:
    """The file taken for each notebook of a hand-in folder, and the notebook files left aside."""

    taken: dict[str, str] = field(default_factory=dict)  # notebook -> the name of its file in the folder
    ignored: dict[str, str] = field(default_factory=dict)  # file name -> why it was not taken

    def notes(self) -> list[str]:
        """What an instructor reads: each file taken under a copy's name, each notebook file ignored."""
        took = [f"took {shown(name)} as {notebook}{NOTEBOOK_SUFFIX}"
                for notebook, name in sorted(self.taken.items()) if name != notebook + NOTEBOOK_SUFFIX]
        return took + [f"ignored {shown(name)} ({why})" for name, why in sorted(self.ignored.items())]


def find_notebooks(folder: Path, notebooks: list[str]) -> HandinFiles:
    """Which plain file of ``folder`` (not its subfolders) stands for each of ``notebooks`` (see the module).

    A notebook none of whose names is there is absent from ``taken``; every other ``.ipynb`` file
    of the folder, a link or special file under a notebook's name included, is in ``ignored``.
    """
    files = HandinFiles()
    if not folder.is_dir():
        return files
    patterns = {notebook: re.compile(copy_pattern(notebook)) for notebook in notebooks}
    candidates: dict[str, list[tuple[CopyRank, int, str]]] = {}
    with os.scandir(folder) as entries:
        listed = sorted((entry for entry in entries if entry.name.endswith(NOTEBOOK_SUFFIX)), key=lambda e: e.name)
    for entry in listed:
        if entry.name.startswith("."):
            continue
        notebook, found = next(((n, m) for n, p in patterns.items() if (m := p.fullmatch(entry.name))), (None, None))
        if notebook is None or found is None:
            files.ignored[entry.name] = why_not(entry.name, notebooks)
        elif not entry.is_file(follow_symlinks=False):
            files.ignored[entry.name] = "not a plain file: a link or a special file is never read"
        else:
            rank = CopyRank.of(found)
            candidates.setdefault(notebook, []).append(
                (rank, entry.stat(follow_symlinks=False).st_mtime_ns, entry.name)
            )
    for notebook, copies in candidates.items():
        *others, (_, _, taken) = sorted(copies)
        files.taken[notebook] = taken
        for _, _, name in others:
            files.ignored[name] = f"{shown(taken)} was taken as {notebook}{NOTEBOOK_SUFFIX}"
    return files


def why_not(name: str, notebooks: list[str]) -> str:
    """Why a ``.ipynb`` file that matches no notebook's names is ignored."""
    close = [notebook for notebook in notebooks if name.startswith(notebook)]
    if close:
        return f"not a name an LMS or a browser gives a copy of {close[0]}{NOTEBOOK_SUFFIX}"
    expected = ", ".join(notebook + NOTEBOOK_SUFFIX for notebook in notebooks)
    return f"not a notebook of this assignment, which has {expected}"
