"""Test cells stand alone (COURSE_SPEC section 3): no graded test cell needs another to have passed.

Read from the code with ``ast`` (tests/support/coupling.py), not from a run: a run only shows
the couplings that today's mistakes trip over. ``tests/test_variants.py`` shows the effect
in-process: mutants list the test cells they must keep (``spares``).
"""

import nbformat

from tests.support.coupling import couplings


def test_no_graded_test_cell_reads_a_name_only_another_test_cell_binds_after_a_check(source_nb, assignment):
    found = couplings(source_nb)
    assert not found, f"{assignment}:\n" + "\n".join(map(str, found))


def _notebook(*cells: tuple[str, str]) -> nbformat.NotebookNode:
    """Cells as (role, source): role is "setup", "answer" or a test cell's grade id."""
    nb = nbformat.v4.new_notebook()
    for role, source in cells:
        cell = nbformat.v4.new_code_cell(source)
        if role == "answer":
            cell.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "answer"}
        elif role != "setup":
            cell.metadata["nbgrader"] = {"solution": False, "grade": True, "grade_id": role, "points": 1}
        nb.cells.append(cell)
    return nb


def test_a_helper_bound_after_a_check_is_a_coupling():
    nb = _notebook(
        ("setup", "import torch"),
        ("answer", "def f(x):\n    return x"),
        ("t_values", "assert f(1) == 1\ndef reference(x):\n    return x"),
        ("t_dtype", "assert f(2) == reference(2)"),
    )
    assert [(c.reader, c.name, c.binder) for c in couplings(nb)] == [("t_dtype", "reference", "t_values")]


def test_a_helper_bound_before_the_first_check_is_shared_safely():
    nb = _notebook(
        ("setup", "import torch"),
        ("answer", "def f(x):\n    return x"),
        ("t_values", "def reference(x):\n    return x\nzero = torch.zeros(2)\nassert f(1) == reference(1)"),
        ("t_dtype", "assert f(zero).dtype == reference(zero).dtype"),
    )
    assert couplings(nb) == []


def test_a_value_computed_by_the_answer_is_not_safe_to_share():
    nb = _notebook(
        ("setup", "import torch"),
        ("answer", "def f(x):\n    return x"),
        ("t_values", "out = f(torch.ones(2))\nassert out.sum() == 2"),
        ("t_dtype", "assert out.dtype == torch.float32"),
    )
    assert [(c.reader, c.name) for c in couplings(nb)] == [("t_dtype", "out")]


def test_names_of_ordinary_cells_and_of_the_cell_itself_are_fine():
    nb = _notebook(
        ("setup", "import torch\ndemo = torch.ones(3)"),
        ("answer", "def f(x):\n    return x"),
        ("t_values", "assert f(demo).sum() == 3\nlocal = 1"),
        ("t_again", "local = f(demo)\nassert local.sum() == 3"),
    )
    assert couplings(nb) == []
