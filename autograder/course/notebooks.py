"""Which cells of an nbgrader notebook are answers, tests and written answers, and how a student fills them."""

import copy
import hashlib
import re
from collections.abc import Iterable, Mapping

import nbformat
from nbformat import NotebookNode

from tfcourse.language import EDITIONS, ENGLISH

SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
SOLUTION_REGION = re.compile(r"^[ \t]*### BEGIN SOLUTION\n(.*?)^[ \t]*### END SOLUTION[ \t]*\n?", re.M | re.S)
# A hidden-test block, markers included; its one group is the hidden code between them. The one pattern
# for it: feedback scrubs these lines, the book removes the blocks, the tests look for them.
HIDDEN_TESTS = re.compile(
    r"^[ \t]*### BEGIN HIDDEN TESTS[ \t]*\n(.*?)^[ \t]*### END HIDDEN TESTS[ \t]*(?:\n|\Z)", re.M | re.S
)


# Optional exercises ("Going further (extra credit)" in 04-07): their cells' grade ids start with this. nbgrader's
# own extra credit is a number an instructor types in formgrader; autograded tests have none, so the grader
# counts the points of these tests on top of full marks: ``export`` leaves them out of each maximum
# (``autograded_max``, the LMS files' points possible) and adds them to the totals and an ``extra_credit`` column.
EXTRA_CREDIT_PREFIX = "extra_credit_"
# A translated release records its language in the notebook's metadata (``{"tfcourse": {"edition": CODE}}``,
# written by ``editions``); the grader reads it to speak the student's language, and imports nothing of editions.
EDITION_KEY = "tfcourse"


def is_extra_credit(grade_id: str | None) -> bool:
    """True for a cell of an optional exercise, whose points come on top of full marks."""
    return bool(grade_id) and grade_id.startswith(EXTRA_CREDIT_PREFIX)


def edition(notebook: NotebookNode) -> str:
    """The language a notebook's prose is in: ``en`` unless its metadata names an edition the course has.

    The student can write the metadata, so anything else (another language, not a string) reads as ``en``.
    """
    metadata = notebook.get("metadata", {})
    named = metadata.get(EDITION_KEY, {}).get("edition") if isinstance(metadata.get(EDITION_KEY), dict) else None
    return named if named in EDITIONS else ENGLISH


def submission_edition(notebooks: Iterable[NotebookNode]) -> str:
    """The edition of a submission's notebooks (the first one's): the language its tests speak."""
    return next((edition(notebook) for notebook in notebooks), ENGLISH)


def nbgrader_meta(cell: NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell: NotebookNode) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def cell_key(cell: NotebookNode) -> str:
    """How a code cell is known in every copy of a notebook: its grade id, else a digest of its text.

    A locked cell keeps its text in the release, in each submission and in the autograded copy;
    a graded cell keeps its grade id even where nbgrader puts the hidden tests back in.
    """
    return grade_id(cell) or "text:" + hashlib.sha256(cell.source.strip().encode()).hexdigest()[:16]


def is_answer_cell(cell: NotebookNode) -> bool:
    """An autograded answer: a code cell the student writes, not graded itself."""
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("solution", False) and not meta.get("grade", False)


def is_graded_test_cell(cell: NotebookNode) -> bool:
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("grade", False) and not meta.get("solution", False)


def is_student_cell(cell: NotebookNode) -> bool:
    """A cell the student writes: a code answer or a written (manually graded) answer."""
    return bool(nbgrader_meta(cell).get("solution", False))


def reference_answers(source: NotebookNode) -> dict[str, str]:
    """Every cell a student writes, as the source notebook holds it, without nbgrader's solution markers."""
    return {
        grade_id(cell): SOLUTION_MARKER.sub("", cell.source)
        for cell in source.cells
        if is_student_cell(cell) and grade_id(cell)
    }


def solution_code(source: str) -> str:
    """The code between the solution markers of an answer cell."""
    return "\n".join(match.group(1) for match in SOLUTION_REGION.finditer(source))


def fill_answers(release: NotebookNode, answers: Mapping[str, str]) -> NotebookNode:
    """A copy of ``release`` with the cells named in ``answers`` (by grade id) filled in, as a student would."""
    filled = nbformat.from_dict(copy.deepcopy(release))
    for cell in filled.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    return filled
