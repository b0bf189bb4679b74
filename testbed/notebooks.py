"""Read nbgrader notebooks: which cells are answers, tests and hints, and what they hold."""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course.notebooks import HIDDEN_TESTS, grade_id, is_answer_cell, is_graded_test_cell

HINT = re.compile(r"<details><summary>Hint (\d+)</summary>(.*?)</details>", re.S)
TODO_HEADING = re.compile(r"^#+ TODO (\d+)\b", re.M)
# "What must hold:" (or "What must hold (in eval mode):", "...; what must hold, for ...:"), then a bullet list or
# the rest of its paragraph.
MUST_HOLD = re.compile(
    r"[Ww]hat must hold[^:\n]*(?:\n[^:\n]*)?:[ \t]*(?P<rest>.*?)(?=\n[ \t]*\n(?![ \t]*[*-] )|\Z)", re.S
)
BULLET = re.compile(r"^[ \t]*[*-] ", re.M)
CLAUSE_BREAK = re.compile(r";|,\s+and\s+|\.\s+(?=[A-Z])")  # "a; b", "a, and b", "a. B"


def read(path: Path) -> NotebookNode:
    return nbformat.read(path, as_version=4)


def answer_cells(nb: NotebookNode) -> dict[str, NotebookNode]:
    return {grade_id(c): c for c in nb.cells if is_answer_cell(c)}


def graded_test_cells(nb: NotebookNode) -> dict[str, NotebookNode]:
    return {grade_id(c): c for c in nb.cells if is_graded_test_cell(c)}


@dataclass(frozen=True)
class Todo:
    """One numbered TODO: its instructions, its hints and the answer cell it asks for."""

    number: int
    instructions: str
    hints: list[tuple[int, str]]
    answer_id: str


def todos(nb: NotebookNode) -> list[Todo]:
    """Pair each ``TODO n`` heading with the markdown after it and the next answer cell."""
    found: list[Todo] = []
    markdown: list[str] = []
    number: int | None = None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            heading = TODO_HEADING.search(cell.source)
            if heading:
                number, markdown = int(heading.group(1)), []
            if number is not None:
                markdown.append(cell.source)
        elif is_answer_cell(cell) and number is not None:
            text = "\n".join(markdown)
            hints = [(int(n), body) for n, body in HINT.findall(text)]
            found.append(Todo(number, text, hints, grade_id(cell)))
            number = None
    return found


def must_hold(instructions: str) -> list[str]:
    """The clauses of a TODO's "What must hold" list: one per bullet, or per ";" of a paragraph.

    A bullet or paragraph is split further at ";", ", and" and between sentences, so that a
    clause states one rule; whitespace is collapsed.
    """
    clauses = []
    for match in MUST_HOLD.finditer(HINT.sub("", instructions)):
        items = [item for item in BULLET.split(match["rest"]) if item.strip()]
        for item in items:
            clauses += [" ".join(part.split()).rstrip(".") for part in CLAUSE_BREAK.split(item) if part.strip()]
    return clauses


def code_lines(code: str) -> list[str]:
    """Non-trivial code lines without comments or indentation (what a leak would look like)."""
    lines = []
    for line in code.splitlines():
        stripped = line.split("#", 1)[0].strip()
        if len(stripped) >= 10:
            lines.append(stripped)
    return lines


def without_hidden_tests(source: str) -> str:
    return HIDDEN_TESTS.sub("", source)


def ends_in_statement(source: str) -> bool:
    """False when the last top-level statement is an expression nbgrader would score.

    A call to ``print`` is allowed: it returns None, so nbgrader sees no value.
    """
    body = ast.parse(source).body
    if not body or not isinstance(body[-1], ast.Expr):
        return True
    value = body[-1].value
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print"
