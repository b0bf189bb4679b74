"""The hand-ins that collect refused, and why: kept in the grading folder for ``export`` to list.

Both collects (nbgrader's, through :mod:`autograder.pipeline.exchange_collect`, and ``python -m
autograder collect`` for LMS downloads) add to one file, ``grading/refused_handins.json``, a
record per refused hand-in keyed by where it was found, so that collecting again does not list a
hand-in twice. The file lies in the course folder, which only instructors can read.
"""

import json
from dataclasses import asdict, dataclass
from pathlib import Path

REFUSED_FILE = "refused_handins.json"


@dataclass(frozen=True)
class Refusal:
    student: str  # the student the hand-in names (not proven: that may be why it was refused)
    assignment: str
    reason: str
    found: str  # where: the exchange folder's name, or the download's file
    seen: str  # when collect refused it (ISO 8601, UTC)


def refusals_path(grading: Path) -> Path:
    return Path(grading) / REFUSED_FILE


def load_refusals(grading: Path) -> list[Refusal]:
    path = refusals_path(grading)
    return [Refusal(**entry) for entry in json.loads(path.read_text())] if path.exists() else []


def record_refusals(grading: Path, refusals: list[Refusal]) -> None:
    """Add ``refusals`` to the grading folder's list (one record per place a hand-in was found)."""
    if not refusals:
        return
    known = {entry.found: entry for entry in load_refusals(grading)}
    known.update({entry.found: entry for entry in refusals})
    path = refusals_path(grading)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(entry) for entry in known.values()], indent=1, sort_keys=True))


def refusals_by_submission(grading: Path) -> dict[tuple[str, str], list[Refusal]]:
    """``{(assignment, student): [refusal, ...]}``, oldest first."""
    grouped: dict[tuple[str, str], list[Refusal]] = {}
    for entry in sorted(load_refusals(grading), key=lambda refusal: refusal.seen):
        grouped.setdefault((entry.assignment, entry.student), []).append(entry)
    return grouped
