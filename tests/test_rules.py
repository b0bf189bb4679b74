"""Every stated rule is tested: testbed/variants/rules.py is complete, and each of its mutants fails its cell.

A rule in a TODO ("leave the model's train/eval mode alone") that no test checks is a rule a
student can break for free. The table names, for each rule quoted from a TODO, the graded test
cell that checks it and a mutant that breaks it; the in-process runner proves the pairing.
"""

import re

import pytest

from autograder.course.settings import assignment_ids, source_notebook
from testbed.notebooks import graded_test_cells, must_hold, read, todos
from testbed.variants import VARIANTS
from testbed.variants.rules import RULES, Rule
from tests.support.harness import inprocess_notebook, variant_answer


def squeezed(text: str) -> str:
    return " ".join(text.split())


def todo_text(notebook: str, exercise: str) -> str:
    found = [t.instructions for t in todos(read(source_notebook(notebook))) if t.answer_id == exercise]
    assert found, f"{notebook}: no TODO asks for answer cell {exercise!r}"
    return squeezed(found[0])


@pytest.mark.parametrize("notebook", assignment_ids())
def test_every_must_hold_clause_has_a_rule(notebook: str) -> None:
    uncovered = []
    for todo in todos(read(source_notebook(notebook))):
        rules = [r for r in RULES if r.notebook == notebook and r.exercise == todo.answer_id]
        for clause in must_hold(todo.instructions):
            if not any(squeezed(rule.words) in clause for rule in rules):
                uncovered.append(f"TODO {todo.number} ({todo.answer_id}): {clause!r}")
    assert not uncovered, (
        "these 'What must hold' clauses have no row in testbed/variants/rules.py (quote the rule, name the test cell "
        "that checks it and a mutant that breaks only it):\n" + "\n".join(uncovered)
    )


def test_must_hold_lists_are_found() -> None:
    # A TODO that says "What must hold" and yields no clause means the parser missed its layout.
    for notebook in assignment_ids():
        for todo in todos(read(source_notebook(notebook))):
            if re.search(r"What must hold", todo.instructions):
                assert must_hold(todo.instructions), f"{notebook} TODO {todo.number}: its 'What must hold' is unparsed"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.notebook}:{r.mutant}")
def test_rule_is_quoted_and_its_cell_and_mutant_exist(rule: Rule) -> None:
    assert squeezed(rule.words) in todo_text(rule.notebook, rule.exercise), (
        f"{rule.words!r} is not in the TODO of {rule.exercise}: quote the TODO's own words"
    )
    cells = graded_test_cells(read(source_notebook(rule.notebook)))
    assert rule.test_cell in cells and rule.test_cell.startswith(rule.exercise), (
        f"{rule.test_cell} is not a graded test cell of {rule.exercise}"
    )
    ids = [v.id for v in VARIANTS[rule.notebook] if v.kind == "mutant"]
    assert rule.mutant_id in ids, f"no mutant {rule.mutant_id} in the variants of {rule.notebook}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: f"{r.notebook}:{r.mutant}")
def test_rule_mutant_fails_the_rule_test_cell(rule: Rule) -> None:
    variant = next(v for v in VARIANTS[rule.notebook] if v.id == rule.mutant_id)
    notebook = inprocess_notebook(rule.notebook)
    reference = notebook.reference_tests()[rule.test_cell]
    assert reference.passed, f"the reference answers fail {rule.test_cell}: {reference.error or reference.stderr}"
    outcomes = notebook.grade(variant_answer(rule.notebook, variant), tests_of=rule.exercise)
    assert not outcomes[rule.test_cell].passed, (
        f"mutant {rule.mutant_id} breaks the rule {rule.words!r}, yet {rule.test_cell} passes: "
        f"that cell does not check the rule (failed instead: {sorted(n for n, o in outcomes.items() if not o.passed)})"
    )
