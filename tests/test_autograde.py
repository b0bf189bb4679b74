"""Real `nbgrader autograde` runs in a temporary course (one per assignment, shared by these tests).

The reference answers' full marks are proven by the course's own grader, which runs nbgrader's
cells too (``tests/grader/test_every_notebook.py``); here another correct answer in every cell
(the alternatives) proves that plain nbgrader grades a correct notebook to full marks.

What the student's Validate button says of the reference and of the untouched release is
tested where the student meets it, in JupyterLab (``tests/browser/test_student_flow.py``).
"""

import pytest

from tests.support.grading_seed import reference_seconds
from tests.support.harness import combined_variants, inprocess_notebook

pytestmark = pytest.mark.slow

NOTEBOOK_BUDGET_SECONDS = 120  # the course's fast-mode budget per notebook, top to bottom on 2 cores


def test_untouched_release_scores_zero(graded):
    score, maximum = graded.code_score("untouched")
    assert maximum > 0 and score == 0, f"the empty release earns {score}/{maximum}"


def test_a_correct_notebook_fits_the_fast_mode_budget(graded, assignment):
    # The alternatives' whole autograde (kernel start to the last cell), and the reference's cells
    # as the course's grader timed them (the run's seed course, tests/support/grading_seed.py).
    assert graded.seconds["alternatives"] < NOTEBOOK_BUDGET_SECONDS, f"{graded.seconds['alternatives']:.0f} s"
    assert reference_seconds(assignment) < NOTEBOOK_BUDGET_SECONDS, f"{reference_seconds(assignment):.0f} s"


def test_alternatives_score_full_marks(graded):
    score, maximum = graded.code_score("alternatives")
    assert maximum > 0 and score == maximum, f"{score}/{maximum}; failed: {graded.failed_cells('alternatives')}"


def test_real_grader_agrees_with_the_fast_harness(graded, assignment):
    predicted = inprocess_notebook(assignment).grade(combined_variants(assignment)["mutants"])
    expected_failures = {name for name, outcome in predicted.items() if not outcome.passed}
    assert expected_failures, "the combined mutants must lose points"
    assert graded.failed_cells("mutants") == expected_failures

