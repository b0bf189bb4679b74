"""The hand-ins that collect refused, and why: kept in the grading folder for ``export`` to list.

Both collects (nbgrader's, through :mod:`autograder.pipeline.exchange.exchange_collect`, and ``python -m
autograder collect`` for LMS downloads) add to one file, ``grading/refused_handins.json``, a
record per refused hand-in keyed by where it was found, so that collecting again does not list a
hand-in twice. ``export`` lists live problems only: once a hand-in of a student is taken for
grading, the refusals of that hand-in and of every older one (by the server's time) are marked
``superseded`` (kept in the file, for the record, and left out of the export). The file lies in
the course folder, which only instructors can read, and is replaced whole (written beside, then
renamed), so that a full disk never leaves it half written.
"""

import json
import os
import tempfile
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

REFUSED_FILE = "refused_handins.json"


@dataclass(frozen=True)
class Refusal:
    student: str  # the student the hand-in names (not proven: that may be why it was refused)
    assignment: str
    reason: str
    found: str  # where: the exchange folder's name, or the download's file
    seen: str  # when collect refused it (ISO 8601, UTC)
    changed: str = ""  # the hand-in's time on the server (ISO 8601, UTC), where collect knows it
    superseded: str = ""  # the time of the hand-in taken for grading since, which makes this one past history

    def superseded_by(self, kept: tuple[datetime, str]) -> bool:
        """Whether the hand-in taken for grading (its time, its folder) makes this refusal past history."""
        time, found = kept
        return self.found == found or (bool(self.changed) and datetime.fromisoformat(self.changed) <= time)


def marked(refusal: Refusal, kept: dict[tuple[str, str], tuple[datetime, str]]) -> Refusal:
    """``refusal``, marked superseded if the hand-in taken for its student (``kept``) is that one or newer."""
    taken = kept.get((refusal.assignment, refusal.student))
    if refusal.superseded or taken is None or not refusal.superseded_by(taken):
        return refusal
    return replace(refusal, superseded=taken[0].isoformat())


def load_refusals(grading: Path) -> list[Refusal]:
    path = Path(grading) / REFUSED_FILE
    return [Refusal(**entry) for entry in json.loads(path.read_text())] if path.exists() else []


def record_refusals(
    grading: Path, refusals: list[Refusal], kept: dict[tuple[str, str], tuple[datetime, str]] | None = None
) -> None:
    """Add ``refusals`` to the grading folder's list (one record per place a hand-in was found).

    ``kept``: ``{(assignment, student): (time, folder)}`` of the hand-ins grading now reads (times
    aware, UTC); the refusals they supersede are marked so.
    """
    kept = kept or {}
    known = {entry.found: entry for entry in load_refusals(grading)}
    before = list(known.values())
    known.update({entry.found: entry for entry in refusals})
    after = [marked(entry, kept) for entry in known.values()]
    if after == before:
        return
    path = Path(grading) / REFUSED_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, draft = tempfile.mkstemp(prefix=f".{REFUSED_FILE}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as out:
            json.dump([asdict(entry) for entry in after], out, indent=1, sort_keys=True)
        os.chmod(draft, 0o660)  # as the course folder's files (the instructors' group)
        os.replace(draft, path)
    except BaseException:
        os.unlink(draft)
        raise


def live_refusals(grading: Path) -> list[Refusal]:
    """The refusals no hand-in taken since has superseded: the problems still open."""
    return [entry for entry in load_refusals(grading) if not entry.superseded]


def refusals_by_submission(grading: Path) -> dict[tuple[str, str], list[Refusal]]:
    """``{(assignment, student): [live refusal, ...]}``, oldest first."""
    grouped: dict[tuple[str, str], list[Refusal]] = {}
    for entry in sorted(live_refusals(grading), key=lambda refusal: refusal.seen):
        grouped.setdefault((entry.assignment, entry.student), []).append(entry)
    return grouped
