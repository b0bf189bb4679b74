"""Mutants (realistic wrong answers) must lose points; alternatives (other correct answers) must not.

Graded with the in-process runner (tests/support/inprocess.py); test_autograde.py checks that a
real nbgrader run agrees with it. Each variant is graded on its own exercise's tests (quick, in
``make test-fast``); an alternative is graded again through to the notebook's last test, which
can mean training a model (slow, in ``make test``).
"""

import pytest

from autograder.course.settings import assignment_ids
from testbed.notebooks import answer_cells, graded_test_cells
from testbed.variants import BLAMES, VARIANTS
from testbed.variants.spec import Blame
from tests.support.harness import inprocess_notebook, variant_answer, wave_answers


def test_every_answer_cell_has_mutants_and_an_alternative(source_nb, assignment):
    for cell in answer_cells(source_nb):
        kinds = [v.kind for v in VARIANTS.get(assignment, []) if v.cell == cell]
        assert kinds.count("mutant") >= 3, f"{assignment}/{cell}: at least 3 mutants"
        assert kinds.count("alternative") >= 1, f"{assignment}/{cell}: at least 1 alternative"


def test_every_assignment_has_variants():
    assert set(VARIANTS) == set(assignment_ids())


def test_spared_cells_exist(source_nb, assignment):
    cells = set(graded_test_cells(source_nb))
    for variant in VARIANTS.get(assignment, []):
        missing = [name for name in variant.spares if name not in cells or not name.startswith(variant.cell)]
        assert not missing, f"{variant.id} spares {missing}: not graded test cells of {variant.cell}"


def test_variant(inprocess, assignment, variant):
    # A mutant needs to fail one of its own exercise's tests; an alternative must pass them all.
    outcomes = inprocess.grade(variant_answer(assignment, variant), tests_of=variant.cell)
    failed = sorted(name for name, outcome in outcomes.items() if not outcome.passed)
    own_failed = [name for name in failed if name.startswith(variant.cell)]
    if variant.kind == "mutant":
        assert own_failed, f"mutant {variant.id} passes every test of {variant.cell}: add a test that catches it"
        spared_but_failed = {name: outcomes[name].error or outcomes[name].stderr for name in variant.spares
                             if name in failed}
        assert not spared_but_failed, (
            f"mutant {variant.id} breaks none of these cells' properties, yet loses their points "
            f"(a test that leans on another property or on another test cell's names): {spared_but_failed}"
        )
    else:
        details = {name: outcomes[name].error or outcomes[name].stderr for name in own_failed}
        assert not own_failed, f"correct alternative {variant.id} loses points: {details}"


BLAME_CASES = [(notebook, blame) for notebook, blames in BLAMES.items() for blame in blames]


@pytest.mark.parametrize(
    ("notebook", "blame"), BLAME_CASES, ids=[f"{n}:{b.mutant}:{b.test_cell}" for n, b in BLAME_CASES]
)
def test_failure_blames_the_answer_at_fault(notebook: str, blame: Blame) -> None:
    # A test cell that calls two answers (attention given the student's mask) must name the wrong one, never
    # the other; the cell is graded with the reference answers around it and the mutant in its answer's place.
    variant = next(v for v in VARIANTS[notebook] if v.id == blame.mutant)
    outcomes = inprocess_notebook(notebook).grade(variant_answer(notebook, variant), tests_of=blame.test_cell)
    said = outcomes[blame.test_cell].error
    assert said, f"mutant {blame.mutant} passes {blame.test_cell}: it cannot show whom the cell blames"
    assert blame.says in said and blame.not_says not in said, (
        f"{blame.test_cell} blames the wrong answer for mutant {blame.mutant}: its failure should say "
        f"{blame.says!r} and not {blame.not_says!r}; it says: {said}"
    )


@pytest.mark.slow
def test_alternatives_lose_no_point_anywhere_in_the_notebook(inprocess, assignment, wave):
    # Later cells use the answers too (a later exercise's test, a model trained on them). One wave of
    # alternatives, one per answer cell, is handed in together: correct answers, so together they must
    # pass every test as well; each cell's first is handed in to plain nbgrader (test_autograde.py).
    outcomes = inprocess.grade(wave_answers(assignment, wave))
    failed = {name: outcome.error or outcome.stderr for name, outcome in outcomes.items() if not outcome.passed}
    if failed:  # which of them: each graded alone, through the notebook
        alone = {v.id: lost for v in wave if (lost := lost_points(inprocess.grade(variant_answer(assignment, v))))}
        alone_text = alone or "none: they lose them only together (do two of them disagree on a convention?)"
        pytest.fail(f"correct alternatives lose points handed in together: {failed}; alone, these do: {alone_text}")


def lost_points(outcomes: dict) -> list[str]:
    return sorted(name for name, outcome in outcomes.items() if not outcome.passed)
