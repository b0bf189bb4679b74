"""What a class wrote: each submission's answers, the release's own code and the reference solutions.

An exercise is an answer cell, known by its nbgrader grade id. Code cells a student added
(helpers, experiments) are their answers too: they are kept together as one more part,
:data:`ADDED`, which counts for the notebook, not for any exercise. Everything else in a
submission (setup cells, test cells, the release's text of an answer cell) is the same for
the whole class and is left out by :func:`release_code`.

Notebooks are read as plain JSON, without nbformat's schema validation, which would take most
of the time of a class's comparison; a file that is not a notebook is reported, not compared.
"""

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course.course import Course
from autograder.course.notebooks import SOLUTION_MARKER, cell_key, grade_id, is_answer_cell
from autograder.pipeline.exchange.handin_names import find_notebooks
from autograder.similarity.fingerprints import MAGIC

ADDED = "added cells"  # the part of a notebook the student added, beside the answer cells


def read_notebook(path: Path) -> NotebookNode:
    """The notebook at ``path``, unvalidated (ValueError when it is not a version-4 notebook)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise ValueError("not a notebook (no list of cells)")
    # Only the cells become NotebookNodes (for the cell helpers), not the outputs: from_dict on the whole
    # notebook would take longer than the fingerprints.
    cells = [NotebookNode(cell, source=source_text(cell)) for cell in data["cells"] if isinstance(cell, dict)]
    return NotebookNode(data, cells=cells)


def source_text(cell: NotebookNode) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def exercises(release: NotebookNode) -> list[str]:
    """The grade ids of the release's answer cells, in notebook order."""
    return [grade_id(cell) for cell in release.cells if is_answer_cell(cell) and grade_id(cell)]


def release_code(release: NotebookNode) -> str:
    """All code the release hands out, answer cells' stubs included: no student wrote any of it."""
    return "\n".join(source_text(cell) for cell in release.cells if cell.get("cell_type") == "code")


def release_names(release: NotebookNode) -> frozenset[str]:
    """The functions and classes the release's code defines or asks for (an answer's are never dead code)."""
    nodes = ast.walk(ast.parse(MAGIC.sub("", release_code(release))))  # IPython lines do not parse
    return frozenset(n.name for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))


def reference_solutions(source: NotebookNode) -> dict[str, str]:
    """Each answer cell of the source notebook, solution markers removed: the reference answer."""
    return {grade_id(cell): SOLUTION_MARKER.sub("", source_text(cell)) for cell in source.cells if is_answer_cell(cell)}


@dataclass
class Submission:
    """One student's answers to one notebook: ``{grade id or ADDED: code}``."""

    student: str
    answers: dict[str, str] = field(default_factory=dict)


def submission_answers(notebook: NotebookNode, release: NotebookNode) -> dict[str, str]:
    """The answer cells of ``notebook`` by grade id (copies of one joined), and its added code cells."""
    wanted = set(exercises(release))
    released = {cell_key(cell) for cell in release.cells if cell.get("cell_type") == "code"}
    answers: dict[str, list[str]] = {}
    for cell in notebook.cells:
        if cell.get("cell_type") != "code":
            continue
        name = grade_id(cell)
        if is_answer_cell(cell) and name in wanted:
            answers.setdefault(name, []).append(source_text(cell))
        elif not name and source_text(cell).strip() and cell_key(cell) not in released:
            answers.setdefault(ADDED, []).append(source_text(cell))
    return {name: "\n".join(parts) for name, parts in answers.items()}


@dataclass
class ClassWork:
    """Every submission of one assignment, and the files that could not be read."""

    assignment: str
    release: NotebookNode
    submissions: list[Submission]
    unreadable: dict[str, str]  # student -> why


def read_class(course: Course, assignment: str) -> ClassWork:
    """What ``collect`` put in ``grading/submitted/<student>/<assignment>/``: the file ``grade`` takes.

    That is ``<assignment>.ipynb``, or a copy's name an LMS or a browser gave it
    (:mod:`~autograder.pipeline.exchange.handin_names`), so the report compares what was graded.
    """
    release = nbformat.read(course.release_notebook(assignment), as_version=4)
    submissions, unreadable = [], {}
    for folder in sorted(course.grading.submitted().glob(f"*/{assignment}")):
        taken = find_notebooks(folder, [assignment]).taken.get(assignment)
        if taken is None:
            continue
        path, student = folder / taken, folder.parent.name
        try:
            notebook = read_notebook(path)
            submissions.append(Submission(student, submission_answers(notebook, release)))
        except (OSError, ValueError, TypeError, AttributeError) as error:
            unreadable[student] = f"{type(error).__name__}: {error}"[:200]
    return ClassWork(assignment, release, submissions, unreadable)
