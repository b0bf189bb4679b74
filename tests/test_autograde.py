"""Real `nbgrader autograde` runs in a temporary course (one per assignment, shared by these tests).

What the student's Validate button says of the reference and of the untouched release is
tested where the student meets it, in JupyterLab (``tests/browser/test_student_flow.py``).
"""

import pytest

from tests.support.harness import combined_variants, inprocess_notebook

pytestmark = pytest.mark.slow

NOTEBOOK_BUDGET_SECONDS = 120  # the course's fast-mode budget per notebook, top to bottom on 2 cores


def test_reference_solution_scores_full_marks(graded):
    score, maximum = graded.code_score("reference")
    assert maximum > 0 and score == maximum, f"{score}/{maximum}; failed: {graded.failed_cells('reference')}"


def test_untouched_release_scores_zero(graded):
    score, maximum = graded.code_score("untouched")
    assert maximum > 0 and score == 0, f"the empty release earns {score}/{maximum}"


def test_reference_fits_the_fast_mode_budget(graded):
    assert graded.seconds["reference"] < NOTEBOOK_BUDGET_SECONDS


def test_alternatives_score_full_marks(graded):
    score, maximum = graded.code_score("alternatives")
    assert score == maximum, f"failed: {graded.failed_cells('alternatives')}"


def test_real_grader_agrees_with_the_fast_harness(graded, assignment):
    predicted = inprocess_notebook(assignment).grade(combined_variants(assignment)["mutants"])
    expected_failures = {name for name, outcome in predicted.items() if not outcome.passed}
    assert expected_failures, "the combined mutants must lose points"
    assert graded.failed_cells("mutants") == expected_failures

