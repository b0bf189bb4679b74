"""The language follows the notebook under any runner: JupyterLab, ``jupyter nbconvert --execute``, nbclient."""

import json
from pathlib import Path

import nbclient
import nbformat
import pytest

from tests.support.kernels import ipc_kernel_manager
from tfcourse import language

SAYS_PASSED = 'from tfcourse.checks import passed\nprint(passed("shapes"))'


def write_notebook(path: Path, edition: str | None, code: str = "") -> Path:
    metadata = {"tfcourse": {"edition": edition}} if edition else {}
    notebook = nbformat.v4.new_notebook(metadata=metadata, cells=[nbformat.v4.new_code_cell(code)] if code else [])
    nbformat.write(notebook, path)
    return path


@pytest.fixture
def unset(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Neither the setting nor a Jupyter Server session: what nbconvert and nbclient give a kernel."""
    monkeypatch.delenv(language.EDITION_VARIABLE, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("editions", "expected"),
    [
        ([], "en"),  # no notebook
        (["zh"], "zh"),
        (["zh", "zh"], "zh"),
        ([None], "en"),  # the English release writes no mark
        (["zh", None], "en"),  # both editions in one folder: the mark is not unanimous
        (["zh", "en"], "en"),
        (["fr"], "en"),  # no edition the course has
    ],
)
def test_without_a_setting_the_folder_s_notebooks_decide_when_they_agree(
    unset: pytest.MonkeyPatch, tmp_path: Path, editions: list[str | None], expected: str
) -> None:
    for number, edition in enumerate(editions):
        write_notebook(tmp_path / f"{number:02d}_notebook.ipynb", edition)
    unset.chdir(tmp_path)
    assert language.edition() == expected


def test_the_setting_then_the_session_come_before_the_folder(unset: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_notebook(tmp_path / "01_attention.ipynb", "zh")
    (tmp_path / "english").mkdir()
    english = write_notebook(tmp_path / "english" / "01_attention.ipynb", None)
    unset.chdir(tmp_path)
    unset.setenv(language.EDITION_VARIABLE, "en")
    assert language.edition() == "en", "TFCOURSE_EDITION comes first: the grader sets it"
    unset.delenv(language.EDITION_VARIABLE)
    unset.setenv("JPY_SESSION_NAME", str(english))
    assert language.edition() == "en", "the session's own notebook comes before the folder's"
    unset.delenv("JPY_SESSION_NAME")
    assert language.edition() == "zh"


def test_a_notebook_saved_again_is_read_again(unset: pytest.MonkeyPatch, tmp_path: Path) -> None:
    notebook = write_notebook(tmp_path / "01_attention.ipynb", "zh")
    unset.chdir(tmp_path)
    assert language.edition() == "zh"
    notebook.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "extra": 1}))
    assert language.edition() == "en"


@pytest.mark.slow
def test_a_chinese_notebook_run_by_nbclient_speaks_chinese(unset: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As ``jupyter nbconvert --execute`` runs it: a kernel started in the notebook's folder, no session."""
    unset.chdir(Path(__file__).parent)  # the runner's own folder is elsewhere; the kernel's is the notebook's
    outputs = {}
    for edition in ("zh", None):
        folder = tmp_path / (edition or "en")
        folder.mkdir()
        notebook = nbformat.read(write_notebook(folder / "01_attention.ipynb", edition, SAYS_PASSED), as_version=4)
        with ipc_kernel_manager() as kernel:
            client = nbclient.NotebookClient(notebook, timeout=120, km=kernel,
                                             resources={"metadata": {"path": str(folder)}})
            client.execute()
        outputs[edition] = "".join(output.get("text", "") for output in notebook.cells[0].outputs)
    assert outputs[None] == "shapes: passed\n", outputs
    assert outputs["zh"] != outputs[None] and any("\u4e00" <= c <= "\u9fff" for c in outputs["zh"]), outputs
