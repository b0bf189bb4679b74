"""The in-process runner per assignment, and the answers that variants give it."""

import functools

from autograder.course import settings
from tests.support.inprocess import InProcessNotebook
from tests.support.notebooks import answer_cells, read
from tests.variants import VARIANTS, Variant


@functools.cache
def inprocess_notebook(assignment: str) -> InProcessNotebook:
    return InProcessNotebook(read(settings.source_notebook(assignment)))


def variant_answer(assignment: str, variant: Variant) -> dict[str, str]:
    """The answer cell a variant replaces, with the variant's source."""
    reference = answer_cells(inprocess_notebook(assignment).notebook)[variant.cell].source
    return {variant.cell: variant.apply(reference)}


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
    for variant in VARIANTS.get(assignment, []):
        answer = variant_answer(assignment, variant)
        if variant.kind == "alternative":
            alternatives.setdefault(variant.cell, answer[variant.cell])
            continue
        failures = sum(not o.passed for o in harness.grade(answer, tests_of=variant.cell).values())
        best = mutants.get(variant.cell)
        if best is None or failures < best[0]:
            mutants[variant.cell] = (failures, answer[variant.cell])
    return {"mutants": {c: src for c, (_, src) in mutants.items()}, "alternatives": alternatives}
