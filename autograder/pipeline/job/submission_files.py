"""The first step of a job: read the submitted notebooks, repair what breaks nbgrader, scan for tampering."""

import uuid
from collections.abc import Iterable
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.pipeline.exchange.handin_names import find_notebooks
from autograder.pipeline.job import static_scan
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.sanitize import sanitize_notebook
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import SubmissionResult


def read_submission(path: Path) -> tuple[NotebookNode, list[str]]:
    """The notebook at ``path`` and the format repairs made; raises if nbgrader could not grade it.

    Cell ids in a notebook that declares format 4.4 (a cell pasted from a newer notebook) make
    it invalid though harmless: the format version is raised to 4.5 instead of refusing it.
    """
    notebook = nbformat.read(path, as_version=4)
    try:
        nbformat.validate(notebook)
        return notebook, []
    except nbformat.ValidationError:
        if notebook.nbformat_minor >= 5:
            raise
    notebook.nbformat_minor = 5
    for cell in notebook.cells:
        cell.setdefault("id", uuid.uuid4().hex[:8])
    nbformat.validate(notebook)
    return notebook, ["cell ids without format 4.5: format raised to 4.5"]


def regular_file(path: Path) -> bool:
    """A plain file, not a link (to the solutions, say) nor a FIFO that would block its reader."""
    return path.is_file() and not path.is_symlink()


def expected_notebooks(cells: Iterable[gradebook.GradeCellInfo]) -> list[str]:
    return sorted({cell.notebook for cell in cells})


def read_notebooks(
    job: GradeJob, names: list[str], result: SubmissionResult
) -> tuple[dict[str, NotebookNode], list[str]]:
    """The submitted notebooks that nbgrader can read, and a note for each that is missing or unreadable.

    A notebook handed in under a copy's name (``01_attention (1).ipynb``) is read as the notebook
    (:mod:`~autograder.pipeline.exchange.handin_names`); ``result.files`` says which file was taken, and
    which notebook files were ignored.
    """
    notebooks: dict[str, NotebookNode] = {}
    problems: list[str] = []
    files = find_notebooks(job.submission, names)
    result.files += files.notes()
    for name in names:
        if name not in files.taken:
            problems.append(f"{name}.ipynb not submitted")
            continue
        path = job.submission / files.taken[name]
        try:
            notebooks[name], repairs = read_submission(path)
            result.repairs += [f"{name}: {repair}" for repair in repairs]
        except Exception as error:  # any parse or schema error makes it unreadable
            problems.append(f"{name}.ipynb unreadable: {type(error).__name__}: {str(error)[:300]}")
    return notebooks, problems


def repair_and_scan(job: GradeJob, notebooks: dict[str, NotebookNode], sources: dict[str, NotebookNode],
                    result: SubmissionResult) -> None:
    """Sanitize each notebook against its release (in place) and note what the static scan finds."""
    releases = job.course.release_folder(job.assignment)
    for name, notebook in notebooks.items():
        release = nbformat.read(releases / f"{name}.ipynb", as_version=4)
        notebooks[name], repairs = sanitize_notebook(notebook, release)
        result.repairs += [f"{name}: {repair}" for repair in repairs]
        result.flags += [f"{name}: {finding}" for finding in static_scan.scan(notebooks[name], sources[name])]
