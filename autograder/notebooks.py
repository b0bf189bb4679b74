"""Which cells of an nbgrader notebook are answers, tests and written answers."""

from nbformat import NotebookNode


def nbgrader_meta(cell: NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def grade_id(cell: NotebookNode) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def is_answer_cell(cell: NotebookNode) -> bool:
    """An autograded answer: a code cell the student writes, not graded itself."""
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("solution", False) and not meta.get("grade", False)


def is_graded_test_cell(cell: NotebookNode) -> bool:
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("grade", False) and not meta.get("solution", False)
