"""``sanitize``: repair what makes nbgrader fail or mis-grade, and say what was repaired.

Reference is the *release* notebook (what the student was given): a deleted test cell
comes back in its release form, and nbgrader's autograde then puts the hidden tests back
from the gradebook as for every other test cell. Repairs, in this order:

1. nbgrader metadata stripped from a cell that is still recognisable is restored: by its cell id,
   by the unchanged text of a locked cell, and for a student's own cell (an answer), whose text and
   id an editor may both have changed, by the function or class it defines or by the cell right above
   it (the unchanged text the release puts there). Editors that drop cell metadata keep the order of
   the cells, so a notebook round-tripped through one is graded as it was written;
2. a grade id held by several cells (a copied cell) stays on the first; the copies become
   ordinary cells, so nbgrader no longer refuses the notebook;
3. a graded cell whose type was changed (code to markdown or raw, ...) gets its type back;
4. a grade id the release does not know is dropped;
5. a locked cell (a test) whose text was edited gets its release text back (autograde would
   restore it silently; here the edit is at least reported);
6. a graded cell that was deleted is inserted again after its predecessor.

:func:`sanitize_submissions` checks every submission of the course (a notebook handed in under a
copy's name too, as ``grade`` takes it: :mod:`autograder.pipeline.handin_names`) and counts what
it checked, so that a run that finds nothing to repair says so.
"""

import copy
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_raw_cell

from autograder.course.course import Course
from autograder.course.notebooks import grade_id, is_student_cell, nbgrader_meta
from autograder.pipeline.handin_names import find_notebooks
from tfcourse.check import DEFINED

NEW_CELL = {"code": new_code_cell, "markdown": new_markdown_cell, "raw": new_raw_cell}


def defined_name(cell: NotebookNode) -> str | None:
    """The first function or class a code cell defines at its top level."""
    found = DEFINED.search(cell.source) if cell.cell_type == "code" else None
    return found.group(1) if found else None


class AnswerPlaces:
    """The release's answer cells, known by what they define and by the text of the cell above each."""

    def __init__(self, release: NotebookNode) -> None:
        answers = [(i, cell) for i, cell in enumerate(release.cells) if is_student_cell(cell) and grade_id(cell)]
        self.by_name = {defined_name(cell): cell for _, cell in answers if defined_name(cell)}
        self.by_above = {release.cells[i - 1].source: cell for i, cell in answers if i > 0}

    def find(self, cell: NotebookNode, above: NotebookNode | None) -> tuple[NotebookNode | None, str]:
        """The answer ``cell`` (whose cell above is ``above``) was written in, and how it was found."""
        name = defined_name(cell)
        if name in self.by_name:
            return self.by_name[name], "the function or class it defines"
        candidate = self.by_above.get(above.source) if above is not None else None
        if candidate is not None and candidate.cell_type == cell.cell_type:
            return candidate, "the cell above it"
        return None, ""


def with_type(cell: NotebookNode, cell_type: str) -> NotebookNode:
    """The same cell (id, metadata, text) as a cell of ``cell_type``."""
    new = NEW_CELL[cell_type](source=cell.source, metadata=copy.deepcopy(cell.metadata))
    if "id" in cell:
        new["id"] = cell["id"]
    else:  # a format 4.4 notebook has no cell ids
        del new["id"]
    return new


def sanitize_notebook(student: NotebookNode, release: NotebookNode) -> tuple[NotebookNode, list[str]]:
    """A repaired copy of ``student`` and the list of repairs made (empty when none was needed)."""
    notebook = copy.deepcopy(student)
    repairs: list[str] = []
    graded = [cell for cell in release.cells if grade_id(cell)]
    by_grade = {grade_id(cell): cell for cell in graded}
    by_cell_id = {cell.get("id"): cell for cell in graded if cell.get("id")}
    locked_text = {cell.source: cell for cell in graded if nbgrader_meta(cell).get("locked")}

    answers = AnswerPlaces(release)
    present = {grade_id(cell) for cell in notebook.cells}
    for index, cell in enumerate(notebook.cells):
        if grade_id(cell):
            continue
        reference, found_by = by_cell_id.get(cell.get("id")) or locked_text.get(cell.source), ""
        if reference is None:
            reference, found_by = answers.find(cell, notebook.cells[index - 1] if index else None)
        if reference is not None and grade_id(reference) not in present:
            cell.metadata["nbgrader"] = copy.deepcopy(nbgrader_meta(reference))
            present.add(grade_id(reference))
            how = f" (found by {found_by})" if found_by else ""
            repairs.append(f"restored the stripped nbgrader metadata of cell {grade_id(reference)!r}{how}")

    seen: set[str] = set()
    for index, cell in enumerate(notebook.cells):
        name = grade_id(cell)
        if name is None:
            continue
        if name in seen:
            del cell.metadata["nbgrader"]
            repairs.append(f"duplicate grade id {name!r}: the copy at cell {index} became an ordinary cell")
        elif name not in by_grade:
            del cell.metadata["nbgrader"]
            repairs.append(f"unknown grade id {name!r} at cell {index} dropped")
        else:
            seen.add(name)
            reference = by_grade[name]
            if nbgrader_meta(reference).get("locked") and cell.source != reference.source:
                cell.source = reference.source
                repairs.append(f"edited test cell {name!r} restored")
            if cell.cell_type != by_grade[name].cell_type:
                notebook.cells[index] = with_type(cell, by_grade[name].cell_type)
                repairs.append(f"cell {name!r} changed back from {cell.cell_type} to {by_grade[name].cell_type}")

    for position, reference in enumerate(graded):
        name = grade_id(reference)
        if name in seen:
            continue
        previous = {grade_id(cell) for cell in graded[:position]}
        after = max((i for i, cell in enumerate(notebook.cells) if grade_id(cell) in previous), default=-1)
        notebook.cells.insert(after + 1, copy.deepcopy(reference))
        seen.add(name)
        repairs.append(f"deleted cell {name!r} restored from the release")
    return notebook, repairs


def sanitize_file(path: Path, release: NotebookNode, write: bool) -> list[str]:
    """Repairs needed by the notebook at ``path``; with ``write`` the repaired notebook replaces it."""
    notebook, repairs = sanitize_notebook(nbformat.read(path, as_version=4), release)
    if write and repairs:
        nbformat.write(notebook, path)
    return repairs


@dataclass
class SanitizeRun:
    """What ``sanitize`` found, a line per finding, and what it checked."""

    lines: list[str] = field(default_factory=list)
    notebooks: int = 0
    students: set[str] = field(default_factory=set)
    to_repair: int = 0  # notebooks that need a repair (with ``write``: that were repaired)
    unreadable: int = 0

    def summary(self, write: bool) -> str:
        checked = f"checked {self.notebooks} notebooks of {len(self.students)} students"
        found = []
        if self.to_repair and write:
            found.append(f"repaired {self.to_repair}")
        elif self.to_repair:
            found.append(f"{self.to_repair} need repairs (--write applies them; grade repairs its own copy)")
        if self.unreadable:
            found.append(f"{self.unreadable} unreadable (grade reports them)")
        return f"{checked}: {'; '.join(found) or 'nothing to repair'}"


def sanitize_submissions(
    course: Course, assignments: list[str], students: list[str] | None = None, write: bool = False
) -> SanitizeRun:
    """Check (with ``write``, repair) the submitted notebook of each student and assignment against its release."""
    run = SanitizeRun()
    submitted = course.grading.submitted()
    for assignment in assignments:  # one notebook per assignment, named like it
        release = nbformat.read(course.release_notebook(assignment), as_version=4)
        for folder in sorted(path for path in submitted.glob(f"*/{assignment}") if path.is_dir()):
            student = folder.parent.name
            if students and student not in students:
                continue
            files = find_notebooks(folder, [assignment])
            run.lines += [f"{student:20s} {assignment}: {note}" for note in files.notes()]
            if assignment not in files.taken:
                continue
            run.notebooks += 1
            run.students.add(student)
            try:
                repairs = sanitize_file(folder / files.taken[assignment], release, write=write)
            except Exception as error:  # report it and go on with the others
                run.lines.append(f"{student:20s} {assignment}: unreadable ({type(error).__name__})")
                run.unreadable += 1
                continue
            run.to_repair += bool(repairs)
            run.lines += [f"{student:20s} {assignment}: {repair}" for repair in repairs]
    return run
