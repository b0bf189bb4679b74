"""A TODO states a contract, not the lines to type: few answer lines may be read off its text.

For every code exercise, the "text" a student reads before answering is every markdown cell
between the previous code cell and the answer cell (the section's prose, the TODO, its hints)
plus the answer cell as released (signature, docstring, comments). An answer line (inside the
solution markers, 12 characters or more once spaces are removed) is *dictated* when it appears,
spaces removed, in that text. The bar (issue 17): at most 5 % of all answer lines of the course,
and at most 25 % of any one exercise's.
"""

import re
from dataclasses import dataclass

import nbformat
import pytest
from nbformat import NotebookNode

from autograder.course.notebooks import grade_id, is_answer_cell
from autograder.course.settings import assignment_ids, release_notebook, source_notebook

MIN_CHARACTERS = 12
COURSE_BAR = 0.05
EXERCISE_BAR = 0.25
SOLUTION = re.compile(r"^[ \t]*### BEGIN SOLUTION[ \t]*\n(.*?)^[ \t]*### END SOLUTION", re.M | re.S)
SPACES = re.compile(r"\s+")
# An assignment, spaces removed: its target, then "=" (or "+=", ...), then the expression.
EXPRESSION = re.compile(r"^[\w.,\[\]()]+(?:[-+*/@|&]|//)?=(?!=)(?P<expression>.+)$")


@dataclass(frozen=True)
class Exercise:
    notebook: str
    grade_id: str
    answer_lines: tuple[str, ...]  # spaces removed, MIN_CHARACTERS or more
    dictated: tuple[str, ...]

    @property
    def share(self) -> float:
        return len(self.dictated) / len(self.answer_lines) if self.answer_lines else 0.0


def squeezed(text: str) -> str:
    return SPACES.sub("", text)


def is_dictated(line: str, text: str) -> bool:
    """``line`` (spaces removed) appears in ``text``, or the expression it assigns does.

    ``self.norm1 = nn.LayerNorm(d_model)`` is dictated by a TODO that lists "`norm1`: `nn.LayerNorm(d_model)`".
    """
    parts = [line]
    if EXPRESSION.match(line):
        parts.append(EXPRESSION.match(line)["expression"])
    return any(len(part) >= MIN_CHARACTERS and part in text for part in parts)


def answer_lines(cell: NotebookNode) -> tuple[str, ...]:
    lines = (squeezed(line) for block in SOLUTION.findall(cell.source) for line in block.splitlines())
    return tuple(line for line in lines if len(line) >= MIN_CHARACTERS)


def exercises(notebook: str) -> list[Exercise]:
    """Each code exercise of ``notebook`` with its answer lines and those its text dictates."""
    source = nbformat.read(source_notebook(notebook), as_version=4)
    released = {grade_id(c): c.source for c in nbformat.read(release_notebook(notebook), as_version=4).cells}
    found, prose = [], []
    for cell in source.cells:
        if cell.cell_type == "markdown":
            prose.append(cell.source)
            continue
        if is_answer_cell(cell):
            text = squeezed("\n".join([*prose, released.get(grade_id(cell), "")]))
            lines = answer_lines(cell)
            dictated = tuple(line for line in lines if is_dictated(line, text))
            found.append(Exercise(notebook, grade_id(cell), lines, dictated))
        prose = []
    return found


COURSE = [exercise for notebook in assignment_ids() for exercise in exercises(notebook)]


def report(chosen: list[Exercise]) -> str:
    return "\n".join(
        f"{e.notebook} {e.grade_id}: {len(e.dictated)}/{len(e.answer_lines)} dictated: {list(e.dictated)}"
        for e in chosen
    )


def test_the_course_dictates_at_most_five_percent_of_its_answer_lines() -> None:
    total = sum(len(e.answer_lines) for e in COURSE)
    dictated = sum(len(e.dictated) for e in COURSE)
    assert total > 100, f"only {total} answer lines found: is the solution marker pattern right?"
    assert dictated <= COURSE_BAR * total, (
        f"{dictated} of {total} answer lines ({dictated / total:.1%}) can be read off the TODO text or its hints; "
        f"at most {COURSE_BAR:.0%}:\n{report([e for e in COURSE if e.dictated])}"
    )


@pytest.mark.parametrize("exercise", COURSE, ids=lambda e: f"{e.notebook}-{e.grade_id}")
def test_no_exercise_dictates_more_than_a_quarter_of_its_answer(exercise: Exercise) -> None:
    assert exercise.share <= EXERCISE_BAR, (
        f"{len(exercise.dictated)} of {len(exercise.answer_lines)} answer lines of {exercise.grade_id} can be read off "
        f"its TODO text or hints; state the contract (shapes, equation, what must hold), not the lines:\n"
        f"{report([exercise])}"
    )


def test_a_line_copied_into_the_todo_counts_as_dictated() -> None:
    cell = nbformat.v4.new_code_cell("### BEGIN SOLUTION\nscores = query @ key.transpose(-2, -1)\n### END SOLUTION\n")
    assert answer_lines(cell) == ("scores=query@key.transpose(-2,-1)",)
    assert is_dictated("scores=query@key.transpose(-2,-1)", squeezed("Write `scores = query @ key.transpose(-2, -1)`."))
    assert is_dictated("self.norm1=nn.LayerNorm(d_model)", squeezed("`norm1`, `norm2`: `nn.LayerNorm(d_model)`"))
    assert is_dictated("returnself.linear2(x)", squeezed("End with `return self.linear2(x)`."))
    assert not is_dictated("self.norm1=nn.LayerNorm(d_model)", squeezed("two LayerNorms of width `d_model`"))
