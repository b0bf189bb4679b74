"""What editors do to a notebook between the release and the hand-in, as transformations of a notebook.

Each models the behaviour its editor's maintainers describe (the threads are cited), or, for Kaggle, what a
notebook Kaggle saved holds; none was observed here, since none of these editors runs on this machine.
``worst`` is the bound: every cell's metadata gone and every cell id new, the order of the cells kept (no
editor reorders cells on save).
"""

import copy
import uuid
from collections.abc import Callable

from nbformat import NotebookNode


def _each_cell(notebook: NotebookNode, change: Callable[[NotebookNode], None]) -> NotebookNode:
    edited = copy.deepcopy(notebook)
    for cell in edited.cells:
        change(cell)
    return edited


def colab(notebook: NotebookNode) -> NotebookNode:
    """Google Colab, a notebook opened from a file and downloaded again.

    Colab keeps the cell ids of a format 4.5 notebook it opened (googlecolab/colabtools#5402, and its
    maintainer in sagemathinc/cocalc#5504: "cell IDs will be round-tripped if the user opens 4.5
    notebooks"), writes an ``id`` of its own into cell metadata (googlecolab/colabtools#581) and an
    ``outputId`` beside it for a cell it ran (NeuromatchAcademy/course-content#101), and records its
    own ``colab`` notebook metadata.
    """

    def change(cell: NotebookNode) -> None:
        cell.metadata["id"] = uuid.uuid4().hex[:12]
        if cell.cell_type == "code":
            cell.metadata["outputId"] = str(uuid.uuid4())
            cell.metadata["colab"] = {"base_uri": "https://localhost:8080/"}

    edited = _each_cell(notebook, change)
    edited.metadata["colab"] = {"provenance": []}
    edited.metadata["accelerator"] = "GPU"
    return edited


def vscode_2020(notebook: NotebookNode) -> NotebookNode:
    """VS Code's Python extension of 2020: every cell it ran lost its metadata (microsoft/vscode-python#9997,
    microsoft/vscode-jupyter#2325), and saving dropped the cell ids of a format 4.5 notebook
    (microsoft/vscode-jupyter#5933, fixed in 2021: microsoft/vscode-jupyter#7682)."""

    def change(cell: NotebookNode) -> None:
        if cell.cell_type == "code":
            cell.metadata = NotebookNode()
        cell.pop("id", None)

    edited = _each_cell(notebook, change)
    edited.nbformat_minor = 4
    return edited


def vscode(notebook: NotebookNode) -> NotebookNode:
    """VS Code today: it keeps cell ids (microsoft/vscode-jupyter#7682) but ignores the metadata that makes a
    cell read-only, so a student may delete a locked test cell or paste a copy of a graded one
    (TU-Wien-dataLAB/grader-service#213: "VSCode ... completely ignores cell metadata"): here the first
    graded test cell is deleted and the first answer cell, metadata and all, is pasted again below itself."""
    edited = copy.deepcopy(notebook)
    tests = [i for i, cell in enumerate(edited.cells) if cell.metadata.get("nbgrader", {}).get("grade")
             and not cell.metadata["nbgrader"].get("solution")]
    answer = next(i for i, cell in enumerate(edited.cells) if cell.metadata.get("nbgrader", {}).get("solution"))
    del edited.cells[tests[0]]
    pasted = copy.deepcopy(edited.cells[answer])
    pasted.id = uuid.uuid4().hex[:8]
    edited.cells.insert(answer + 1, pasted)
    return edited


# The times Kaggle's ``execution`` cell metadata records of a cell's run (Jupyter's message timestamps).
EXECUTION_TIMES = ("iopub.status.busy", "iopub.execute_input", "iopub.status.idle", "shell.execute_reply.started",
                   "shell.execute_reply")


def kaggle(notebook: NotebookNode) -> NotebookNode:
    """Kaggle's editor, as a notebook it saved shows: Kaggle/kaggle-api's tests/kernel/testing-x.ipynb (committed
    as tests/kernel/testing.ipynb in d2534a2, "Update tests (#618)", renamed in d2ed914), which ran on Kaggle's
    image 30646. It is format 4.4, without cell ids; the metadata of its code cell, which ran, is Kaggle's
    ``_uuid``, ``_cell_guid``, ``execution`` (the times of the run) and ``trusted``; the notebook's metadata is
    ``kernelspec``, ``language_info`` and ``kaggle`` (accelerator, data sources, image, internet, language,
    source type, GPU). Its cell's source is one string, which nbformat reads as it reads a list of lines.

    What that notebook cannot show, whether Kaggle keeps the metadata of a notebook it imported (nbgrader's,
    the course's edition), is taken at its worst: gone. So every code cell (the student ran them all) carries
    Kaggle's keys alone, every Markdown cell none, and the notebook's metadata only what the file shows.
    """
    ran = "2024-06-11T17:18:41.771461Z"

    def change(cell: NotebookNode) -> None:
        cell.pop("id", None)
        cell.metadata = NotebookNode()
        if cell.cell_type == "code":
            cell.metadata.update(_uuid=str(uuid.uuid4()), _cell_guid=str(uuid.uuid4()), trusted=True,
                                 execution=dict.fromkeys(EXECUTION_TIMES, ran))

    edited = _each_cell(notebook, change)
    edited.nbformat_minor = 4
    edited.metadata = NotebookNode(
        kernelspec=notebook.metadata.get("kernelspec", {}), language_info=notebook.metadata.get("language_info", {}),
        kaggle={"accelerator": "none", "dataSources": [], "dockerImageVersionId": 30646, "isInternetEnabled": True,
                "language": "python", "sourceType": "notebook", "isGpuEnabled": False})
    return edited


def worst(notebook: NotebookNode) -> NotebookNode:
    """Every cell's metadata gone and every cell id new; the order of the cells kept."""

    def change(cell: NotebookNode) -> None:
        cell.metadata = NotebookNode()
        cell.id = uuid.uuid4().hex[:8]

    return _each_cell(notebook, change)


EDITORS: dict[str, Callable[[NotebookNode], NotebookNode]] = {
    "colab": colab,
    "kaggle": kaggle,
    "vscode_2020": vscode_2020,
    "worst": worst,
}
