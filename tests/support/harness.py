"""The in-process runner per assignment, and the answers that variants give it."""

import functools
import json
import os
import tempfile
from pathlib import Path

from filelock import FileLock

from autograder.course import settings
from testbed.notebooks import answer_cells, read
from testbed.variants import VARIANTS, Variant
from tests.support.inprocess import InProcessNotebook

# A folder shared by every worker of one test run (conftest.py makes it in the controller, whose
# environment the xdist workers inherit).
SHARED_FOLDER_ENV = "TFCOURSE_TEST_SHARED"
# Screenshots and server logs of the browser tests, kept after the run; emptied once per run (tests/conftest.py).
BROWSER_ARTIFACTS = settings.REPO_ROOT / "build" / "browser-artifacts"


def figures_file(assignment: str) -> Path:
    return Path(os.environ.get(SHARED_FOLDER_ENV) or tempfile.gettempdir()) / f"figures-{assignment}.json"


@functools.cache
def inprocess_notebook(assignment: str) -> InProcessNotebook:
    """The notebook run in this process; its figure counts are published for the other workers."""
    path = figures_file(assignment)
    with FileLock(f"{path}.lock"):
        notebook = InProcessNotebook(read(settings.source_notebook(assignment)))
        path.write_text(json.dumps([outcome.figures for outcome in notebook.reference]))
    return notebook


def reference_figures(assignment: str) -> list[int]:
    """How many figures each code cell of the notebook's in-process reference run makes.

    The run is costly (a whole notebook) and the book's and the browser's tests need only these
    counts: a worker that finds them published by another (or waits while another runs the
    notebook) reads them instead of running the notebook again.
    """
    path = figures_file(assignment)
    with FileLock(f"{path}.lock"):
        if path.exists():
            return json.loads(path.read_text())
    return [outcome.figures for outcome in inprocess_notebook(assignment).reference]


def variant_answer(assignment: str, variant: Variant) -> dict[str, str]:
    """The answer cell a variant replaces, with the variant's source."""
    reference = answer_cells(inprocess_notebook(assignment).notebook)[variant.cell].source
    return {variant.cell: variant.apply(reference)}


def alternative_waves(assignment: str) -> list[list[Variant]]:
    """The notebook's alternatives in waves: wave 0 holds each answer cell's first, wave k its (k+1)-th.

    The alternatives of one wave are handed in together: they are all correct answers, so together
    they must pass every test too. Wave 0 goes to plain nbgrader (``combined_variants``); the later
    waves are graded through the notebook in-process (``tests/test_variants.py``).
    """
    by_cell: dict[str, list[Variant]] = {}
    for variant in VARIANTS.get(assignment, []):
        if variant.kind == "alternative":
            by_cell.setdefault(variant.cell, []).append(variant)
    depth = max(map(len, by_cell.values()), default=0)
    return [[alternatives[k] for alternatives in by_cell.values() if len(alternatives) > k] for k in range(depth)]


def combined_alternative_ids(assignment: str) -> set[str]:
    """The alternatives :func:`combined_variants` hands in together: each answer cell's first."""
    waves = alternative_waves(assignment)
    return {variant.id for variant in waves[0]} if waves else set()


def wave_answers(assignment: str, wave: list[Variant]) -> dict[str, str]:
    """The answer cells of one wave of alternatives (one per cell), each with its alternative's source."""
    return {cell: source for variant in wave for cell, source in variant_answer(assignment, variant).items()}


def combined_variants(assignment: str) -> dict[str, dict[str, str]]:
    """Two submissions touching every answer cell at once.

    ``mutants``: per answer cell, the mutant that fails the fewest of its exercise's test cells
    (the hardest one to catch); ``alternatives``: per answer cell, its first alternative. A
    mutant is graded as ``tests/test_variants.py`` grades it, up to its exercise's last test
    (not through a training cell further down), and the runner keeps that outcome for both.
    """
    harness = inprocess_notebook(assignment)
    mutants: dict[str, tuple[int, str]] = {}
    alternatives: dict[str, str] = {}
    combined = combined_alternative_ids(assignment)
    for variant in VARIANTS.get(assignment, []):
        answer = variant_answer(assignment, variant)
        if variant.kind == "alternative":
            if variant.id in combined:
                alternatives[variant.cell] = answer[variant.cell]
            continue
        failures = sum(not o.passed for o in harness.grade(answer, tests_of=variant.cell).values())
        best = mutants.get(variant.cell)
        if best is None or failures < best[0]:
            mutants[variant.cell] = (failures, answer[variant.cell])
    return {"mutants": {c: src for c, (_, src) in mutants.items()}, "alternatives": alternatives}
