"""The reference answers' time per cell, kept in the grading folder, keyed by a digest of the source notebooks:
a changed notebook is timed again (its cell limits: :mod:`autograder.pipeline.job.cell_limits`)."""

import hashlib
import json
from pathlib import Path

from autograder.course.paths import GradingFolder

TIMES_FILE = "reference_times.json"


def sources_digest(folder: Path) -> str:
    """A digest of an assignment's source notebooks: their reference times hold while it is unchanged."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.ipynb")):
        digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def load_times(grading: GradingFolder, assignment: str, digest: str) -> dict[str, dict[str, float]] | None:
    """The kept reference times of ``assignment`` if its source notebooks are still those timed."""
    try:
        entry = json.loads(grading.file(TIMES_FILE).read_text()).get(assignment, {})
    except (OSError, ValueError):
        return None
    return entry.get("seconds") if entry.get("digest") == digest else None


def save_times(grading: GradingFolder, assignment: str, digest: str, times: dict[str, dict[str, float]]) -> None:
    path = grading.file(TIMES_FILE)
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        kept = {}
    kept[assignment] = {"digest": digest, "seconds": times}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept, indent=1))
