"""A small hostile class for any notebook of the course, built from its own cells.

``hostile_class.py`` holds the full class, written against notebook 01; these cases are
derived from whichever notebook they are given, so that every notebook is graded at least
once with a loop, a dying kernel and a leak in it:

- ``blank_dies``: the reference answers, except the first exercise, left as released, and a cell
  right after it that kills the kernel (``os._exit``): the clean re-run scores every test, and
  gives every point that does not need the first exercise;
- ``loops_first``: the reference answers, except that the first exercise loops forever when
  called: its kernel must keep exactly the points the clean re-run gave ``blank_dies``, those of
  the tests that do not call it (two ways to the same points, compared);
- ``prints_hidden``: the reference answers, the last of which prints every hidden-test
  block of the notebook (embedded in base64, as a student who got hold of them would).
"""

import ast
import base64
from collections.abc import Callable

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from autograder.course.course import Course
from autograder.course.notebooks import fill_answers, grade_id, is_answer_cell, reference_answers
from autograder.course.settings import release_notebook, source_notebook
from tests.grader.hostile_class import hidden_test_blocks

STUDENTS = ("blank_dies", "loops_first", "prints_hidden")


def source(assignment: str) -> NotebookNode:
    return nbformat.read(source_notebook(assignment), as_version=4)


def answer_ids(assignment: str) -> list[str]:
    return [grade_id(cell) for cell in source(assignment).cells if is_answer_cell(cell)]


def filled(assignment: str, **changed: str) -> NotebookNode:
    """The release filled with the reference answers, the answers named in ``changed`` replaced."""
    answers = {**reference_answers(source(assignment)), **changed}
    return fill_answers(nbformat.read(release_notebook(assignment), as_version=4), answers)


def looping(answer: str) -> str:
    """``answer`` with its first function (or class) made to loop forever when called (constructed).

    The loop sleeps instead of spinning: a cell limit stops both the same way (the hostile class
    of notebook 01 keeps a spinning loop), and a sleeping one leaves the cores to the rest of the suite.
    """
    first = next(node for node in ast.parse(answer).body if isinstance(node, ast.FunctionDef | ast.ClassDef))
    if isinstance(first, ast.ClassDef):
        override, indent = f"class {first.name}({first.name}):\n    def __init__(self, *args, **kwargs):\n", " " * 8
    else:
        override, indent = f"def {first.name}(*args, **kwargs):\n", " " * 4
    return f"{answer}\n\n{override}{indent}while True:\n{indent}    __import__('time').sleep(0.05)\n"


def blank_dies(assignment: str) -> NotebookNode:
    first = answer_ids(assignment)[0]
    release = nbformat.read(release_notebook(assignment), as_version=4)
    untouched = next(cell.source for cell in release.cells if grade_id(cell) == first)
    notebook = filled(assignment, **{first: untouched})
    index = next(i for i, cell in enumerate(notebook.cells) if grade_id(cell) == first)
    cell = new_code_cell("import os\n\nos._exit(3)")
    del cell["id"]
    notebook.cells.insert(index + 1, cell)
    return notebook


def loops_first(assignment: str) -> NotebookNode:
    first = answer_ids(assignment)[0]
    return filled(assignment, **{first: looping(reference_answers(source(assignment))[first])})


def prints_hidden(assignment: str) -> NotebookNode:
    last = answer_ids(assignment)[-1]
    copied = base64.b64encode("\n".join(hidden_test_blocks(source(assignment))).encode()).decode()
    answer = reference_answers(source(assignment))[last]
    return filled(assignment, **{last: f"{answer}\n\nimport base64\n\nprint(base64.b64decode({copied!r}).decode())\n"})


BUILDERS: dict[str, Callable[[str], NotebookNode]] = {
    "blank_dies": blank_dies,
    "loops_first": loops_first,
    "prints_hidden": prints_hidden,
}


def hand_in(course: Course, assignment: str) -> None:
    """The class's submissions of ``assignment``, handed in to ``course`` (a throw-away course that has it)."""
    for student, build in BUILDERS.items():
        folder = course.grading.submitted(student, assignment)
        folder.mkdir(parents=True)
        nbformat.write(build(assignment), folder / f"{assignment}.ipynb")
