"""The reference notebook, run in-process: clean cells, silent graded cells, readable figures."""


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
