"""Static checks of every source notebook and its release: the rules nbgrader and students rely on."""

import re
from collections import Counter

import nbformat

from autograder.course.notebooks import grade_id, nbgrader_meta, solution_code
from testbed.notebooks import (
    answer_cells,
    code_lines,
    ends_in_statement,
    graded_test_cells,
    todos,
    without_hidden_tests,
)

MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def test_notebooks_are_valid_and_stored_without_outputs(source_nb, release_nb):
    for nb in (source_nb, release_nb):
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3"
        stored = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
        assert not stored, f"code cells {stored} have stored outputs: clear them before committing"


def test_grade_ids_are_unique(source_nb):
    ids = Counter(grade_id(c) for c in source_nb.cells if grade_id(c))
    assert not [g for g, n in ids.items() if n > 1]


def test_every_answer_has_a_numbered_todo_with_hints(source_nb):
    found = todos(source_nb)
    assert [t.number for t in found] == list(range(1, len(found) + 1)), "TODOs must be numbered 1, 2, 3, ..."
    assert sorted(t.answer_id for t in found) == sorted(answer_cells(source_nb)), "each answer cell needs a TODO"
    for todo in found:
        numbers = [n for n, _ in todo.hints]
        assert 1 <= len(numbers) <= 3 and numbers == list(range(1, len(numbers) + 1)), (
            f"TODO {todo.number}: hints should be 'Hint 1', 'Hint 2', ... (at most 3), found {numbers}"
        )


def test_hints_never_contain_a_solution_line(source_nb):
    answers = answer_cells(source_nb)
    for todo in todos(source_nb):
        hint_text = " ".join(re.sub(r"\s+", " ", body) for _, body in todo.hints)
        for line in code_lines(solution_code(answers[todo.answer_id].source)):
            assert re.sub(r"\s+", " ", line) not in hint_text, f"TODO {todo.number}: a hint gives away `{line}`"


def test_graded_test_cells_are_locked_scored_and_end_in_a_statement(source_nb):
    cells = graded_test_cells(source_nb)
    assert cells, "a notebook with exercises needs graded test cells"
    for name, cell in cells.items():
        meta = nbgrader_meta(cell)
        assert meta["locked"] and meta["points"] > 0, f"{name}: graded test cells are locked and worth points"
        assert ends_in_statement(cell.source), (
            f"{name} ends in an expression: nbgrader would score its value (a False is full marks)"
        )
        assert cell.source.count("### BEGIN HIDDEN TESTS") == cell.source.count("### END HIDDEN TESTS")


def test_every_answer_cell_has_a_solution_region_and_tests(source_nb):
    tests = graded_test_cells(source_nb)
    for name, cell in answer_cells(source_nb).items():
        assert solution_code(cell.source).strip(), f"{name}: no ### BEGIN/END SOLUTION region"
        assert any(t.startswith(name) for t in tests), f"{name}: no graded test cell named {name}_*"
        assert sum(t.startswith(name) for t in tests) >= 2, f"{name}: split its tests for partial credit"


def test_release_holds_no_solution_and_no_hidden_test(source_nb, release_nb):
    release_text = nbformat.writes(release_nb)
    for marker in MARKERS:
        assert marker not in release_text
    release_answers = answer_cells(release_nb)
    for name, cell in answer_cells(source_nb).items():
        assert "raise NotImplementedError" in release_answers[name].source
        for line in code_lines(solution_code(cell.source)):
            assert line not in release_answers[name].source, f"{name}: the release still holds `{line}`"
    release_tests = graded_test_cells(release_nb)
    for name, cell in graded_test_cells(source_nb).items():
        assert release_tests[name].source.strip() == without_hidden_tests(cell.source).strip()
