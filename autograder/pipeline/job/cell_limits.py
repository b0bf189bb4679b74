"""Per-cell time limits that follow the reference run, so that a loop costs seconds, not minutes.

A cell's limit is ``GradeSettings.reference_factor`` times what the cell took when the reference answers were graded,
plus ``GradeSettings.reference_margin`` seconds, never more than the course's cell timeout; a cell the reference
does not have (one the student added or rewrote) gets the cell timeout. nbclient interrupts
a cell at its limit (``timeout_func``), and the clean re-run stops it there too. The
reference times are measured once per assignment by ``grade`` and kept
(:mod:`autograder.pipeline.storage.reference_times`).
"""

import math
from dataclasses import dataclass, field
from datetime import datetime

from nbformat import NotebookNode

from autograder.course.notebooks import cell_key
from autograder.launch.limits import Limits


@dataclass(frozen=True)
class CellLimits:
    """The limit of each cell of an assignment's notebooks (``{notebook: {cell key: seconds}}``)."""

    default: float  # the course's cell timeout: cells the reference run did not time
    seconds: dict[str, dict[str, float]] = field(default_factory=dict)
    reference: dict[str, dict[str, float]] = field(default_factory=dict)  # what the reference took
    rule: Limits = Limits()  # its reference_factor and reference_margin

    @classmethod
    def from_times(cls, times: dict[str, dict[str, float]], rule: Limits) -> "CellLimits":
        """Each cell's limit: ``rule``'s factor times what the reference took, plus its margin, rounded up to a tenth
        of a second, at most ``rule.cell_timeout``."""
        cap = rule.cell_timeout

        def limit(took: float) -> float:
            return min(cap, math.ceil((rule.reference_factor * took + rule.reference_margin) * 10) / 10)

        limits = {notebook: {key: limit(took) for key, took in cells.items()} for notebook, cells in times.items()}
        return cls(cap, limits, times, rule)

    def of(self, notebook: str) -> dict[str, float]:
        return self.seconds.get(notebook, {})

    def describe(self, notebook: str, key: str) -> str:
        """Why a cell stopped where it did: "8 s, 10x the reference's 0.3 s + 5 s"."""
        limit = self.of(notebook).get(key, self.default)
        took = self.reference.get(notebook, {}).get(key)
        if took is None:
            return f"{limit:g} s, the cell timeout"
        rule = self.rule
        return f"{limit:g} s, {rule.reference_factor:g}x the reference's {took:.2f} s + {rule.reference_margin:g} s"


def cell_seconds(notebook: NotebookNode) -> dict[str, float]:
    """``{cell key: seconds}`` of the code cells nbclient ran, from the timing it records in each cell."""
    seconds = {}
    for cell in notebook.cells:
        timing = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type != "code" or not {"iopub.execute_input", "shell.execute_reply"} <= set(timing):
            continue
        began = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
        ended = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
        seconds[cell_key(cell)] = max(0.0, (ended - began).total_seconds())
    return seconds
