"""The language the course speaks in this run: English, or the edition the notebook belongs to.

The code is the same in every edition, so the language is chosen when it runs, in this order:

1. ``TFCOURSE_EDITION`` in the environment (``make lab EDITION=zh`` sets it; the grader sets it
   to the edition of the submission it grades; the reader edition sets it for each page);
2. the edition the notebook's setup cell names (its first code cell calls ``tfcourse.hosted.setup``, which
   calls :func:`record_edition`): the notebook itself says which edition it is, whatever folder its kernel
   started in and whatever notebooks lie beside it;
3. the edition recorded in the metadata of the notebook this kernel runs (a translated release
   writes ``{"tfcourse": {"edition": CODE}}``, a code of :mod:`tfcourse.registry`), found through
   ``JPY_SESSION_NAME``, the path Jupyter Server gives every notebook's kernel;
4. else the edition the notebooks of the working directory agree on: ``jupyter nbconvert --execute``,
   nbclient and editors' notebook runners set no session variable but start the kernel in the
   notebook's own folder. A notebook without the mark counts as English, so a folder holding notebooks
   of both editions (or none at all) is English: the mark decides only where it is unanimous;
5. English.

So a Chinese notebook speaks Chinese without any setting, whatever runs it.
"""

import contextlib
import json
import os
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from tfcourse.registry import editions, source

EDITION_VARIABLE = "TFCOURSE_EDITION"
ENGLISH = source()
EDITIONS = tuple(editions())

_recorded: str | None = None  # what the running notebook's setup cell named (record_edition)


def record_edition(name: str) -> None:
    """Remember the edition the running notebook names, for the rest of this kernel's life."""
    global _recorded
    if name not in EDITIONS:
        raise ValueError(f"unknown edition {name!r}: one of {', '.join(EDITIONS)}")
    _recorded = name


def notebook_edition(path: Path) -> str | None:
    """The edition a notebook's metadata names, or None (no notebook there, unreadable, or none named)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return _recorded_edition(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _recorded_edition(path: str, _mtime_ns: int, _size: int) -> str | None:
    """:func:`notebook_edition`, read once per version of the file: ``tr`` asks for every message."""
    try:
        metadata = json.loads(Path(path).read_text(encoding="utf-8")).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return None
    named = metadata.get("tfcourse", {}).get("edition") if isinstance(metadata, dict) else None
    return named if named in EDITIONS else None


def folder_edition(folder: Path) -> str | None:
    """The edition every notebook in ``folder`` names (one without a name counts as English), or None when the
    folder holds no notebook or notebooks of different editions."""
    try:
        notebooks = sorted(folder.glob("*.ipynb"))
    except OSError:
        return None
    found = {notebook_edition(notebook) or ENGLISH for notebook in notebooks}
    return found.pop() if len(found) == 1 else None


def edition() -> str:
    """An edition's code (:mod:`tfcourse.registry`): the language this run's messages, printouts and figures are in."""
    chosen = os.environ.get(EDITION_VARIABLE, "").strip()
    if chosen in EDITIONS:
        return chosen
    if _recorded is not None:
        return _recorded
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb"):
        return notebook_edition(Path(session)) or ENGLISH
    try:
        here = Path.cwd()
    except OSError:  # the working directory was removed
        return ENGLISH
    return folder_edition(here) or ENGLISH


@contextlib.contextmanager
def speaking(language: str) -> Iterator[None]:
    """Messages in ``language`` while the block runs (a check's table, the release writing an edition's cells): the
    setting that outranks every other source of the edition, put back as it was after."""
    before = os.environ.get(EDITION_VARIABLE)
    os.environ[EDITION_VARIABLE] = language
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(EDITION_VARIABLE, None)
        else:
            os.environ[EDITION_VARIABLE] = before
