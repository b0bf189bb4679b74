"""The reference notebook, run in-process: clean cells, silent graded cells, readable figures."""

import re

import matplotlib.pyplot as plt

from tests.support.inprocess import SINGULAR_IN_PLURAL, figure_problems

# What a fast-mode printout must not say: "-40 % lower" (a negative improvement), "0.0 min" (a short time
# in the wrong unit), "1 steps".
MISLEADING = {
    "a negative percentage": re.compile(r"(?<![\w.])-\d+(?:\.\d+)?\s?%"),
    "a time of 0.0 minutes": re.compile(r"\b0\.0 min\b"),
    "a count of 1 in the plural": SINGULAR_IN_PLURAL,
}


def test_every_cell_of_the_reference_runs(inprocess):
    errors = [f"cell {o.index} ({o.grade_id}): {o.error}" for o in inprocess.reference if o.error]
    assert not errors, "\n".join(errors)


def test_graded_cells_pass_and_write_nothing_to_stderr(inprocess):
    # nbgrader gives 0 points to a test cell that writes to stderr (warnings included).
    noisy = {name: o.stderr for name, o in inprocess.reference_tests().items() if o.stderr}
    assert not noisy, noisy
    assert all(o.passed for o in inprocess.reference_tests().values())


def test_every_figure_has_a_title_and_axis_labels(inprocess):
    assert sum(o.figures for o in inprocess.reference) >= 1, "each notebook makes its ideas visible"
    problems = [p for o in inprocess.reference for p in o.figure_problems]
    assert not problems, "\n".join(problems)


def test_fast_mode_printouts_read_as_intended(inprocess):
    # The reference runs in fast mode here, as under the grader: a tiny model, a few steps. What its ordinary
    # cells print (the graded test cells print their checks) must still read as a short run, not as a bug.
    problems = [
        f"cell {o.index} prints {what}: {o.stdout[max(0, match.start() - 60) : match.end() + 20]!r}"
        for o in inprocess.reference
        if o.grade_id is None
        for what, pattern in MISLEADING.items()
        for match in pattern.finditer(o.stdout)
    ]
    assert not problems, "\n".join(problems)


def test_the_figure_checks_catch_a_baseline_off_the_axes_and_a_plural_1():
    # What the fast-mode 07 and 06 figures did before issue 25: a legend naming a line drawn below the
    # y-range, and "1 warm-up steps" in a title.
    figure, axes = plt.subplots()
    axes.plot([1, 2, 3], [4.0, 3.5, 3.3], label="validation loss")
    axes.axhline(2.65, label="bigram baseline (2.65)")
    axes.axhline(4.2, label="unigram baseline")
    axes.set_ylim(3.0, 5.0)
    axes.legend()
    axes.set(title="Learning rate: 1 warm-up steps, then cosine decay", xlabel="step", ylabel="loss")
    problems = figure_problems(0)
    plt.close(figure)
    assert len(problems) == 2, problems
    assert "bigram baseline (2.65)" in problems[0] and "unigram" not in problems[0]
    assert "plural" in problems[1]
