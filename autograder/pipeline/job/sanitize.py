"""Repair what makes nbgrader fail or mis-grade, and say what was repaired (``grade`` and ``sanitize`` both do).

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
"""

import copy

from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_raw_cell

from autograder.course.notebooks import grade_id, is_student_cell, nbgrader_meta
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
