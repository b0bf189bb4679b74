"""The setup cell and the Colab/Kaggle links (tfcourse/hosted.py): written by the release, at pyproject's version,
and the edition the setup cell names wins over the folder the kernel starts in.

The install on a fresh environment, as a hosted service runs it, is tests/test_hosted_install.py (slow).
"""

import re
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from autograder.course import settings
from autograder.course.notebooks import edition
from autograder.pipeline.job import clean_rerun, static_scan
from editions.release import edition_notebook as release_notebook_path
from tfcourse import hosted, registry
from tfcourse.project import repository_url

VERSION = tomllib.loads((settings.REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
OWNER_REPO = repository_url().removeprefix("https://github.com/")
# The documented forms: Colab opens github.com notebooks at /github/OWNER/REPO/blob/REF/PATH; Kaggle imports one from
# its address with /kernels/welcome?src=URL.
COLAB = re.compile(rf"^https://colab\.research\.google\.com/github/{re.escape(OWNER_REPO)}/blob/(?P<ref>[^/]+)/"
                   r"(?P<path>[\w./-]+\.ipynb)$")
KAGGLE = re.compile(rf"^https://kaggle\.com/kernels/welcome\?src=https://github\.com/{re.escape(OWNER_REPO)}/blob/"
                    r"(?P<ref>[^/]+)/(?P<path>[\w./-]+\.ipynb)$")
LINK = re.compile(r"\]\((https://[^)\s]+)\)")
FOLDERS = (settings.SOURCE_DIRECTORY, settings.RELEASE_DIRECTORY, registry.editions()["zh"].release)
NOTEBOOKS = [settings.REPO_ROOT / folder / name / f"{name}.ipynb"
             for folder in FOLDERS for name in settings.assignment_ids()]
CJK = re.compile(r"[\u4e00-\u9fff]")
KERNEL_SECONDS = 120


def release_path(notebook: Path) -> str:
    """Where the student release of this notebook's edition lies (a solution's links open the English release)."""
    folder = notebook.parent.parent.name
    folder = settings.RELEASE_DIRECTORY if folder == settings.SOURCE_DIRECTORY else folder
    return f"{folder}/{notebook.parent.name}/{notebook.name}"


def check_link(url: str, expected_path: str | None = None) -> str:
    """The repository path a Colab or Kaggle link opens, after checking its form and that it is this release's."""
    found = COLAB.match(url) or KAGGLE.match(url)
    assert found, f"{url} is neither Colab's nor Kaggle's documented form"
    assert found["ref"] == f"v{VERSION}", f"{url} opens {found['ref']}, not this release's tag v{VERSION}"
    assert (settings.REPO_ROOT / found["path"]).is_file(), f"{url} opens {found['path']}, which is not in the repo"
    assert expected_path in (None, found["path"]), f"{url} opens {found['path']}, not {expected_path}"
    return found["path"]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: f"{path.parent.parent.name}/{path.parent.name}")
def test_the_first_cells_are_the_links_and_the_setup_cell_of_this_version(notebook: Path):
    nb = nbformat.read(notebook, as_version=4)
    first_code = next(cell for cell in nb.cells if cell.cell_type == "code")
    expected = hosted.setup_cell(edition(nb), VERSION, **hosted.NEEDS.get(notebook.parent.name, {}))
    assert first_code.id == hosted.SETUP_CELL_ID and first_code.source == expected, (
        f"{notebook}: the first code cell is not the setup cell of version {VERSION}: run `make release`")
    assert f'version="{VERSION}"' in first_code.source and hosted.install_url(VERSION) in first_code.source
    links = nb.cells[0]
    assert links.cell_type == "markdown" and links.id == hosted.LINKS_CELL_ID
    urls = [url for url in LINK.findall(links.source) if "/kernels/" in url or "colab." in url]
    assert len(urls) == 2, urls
    assert {check_link(url, release_path(notebook)) for url in urls} == {release_path(notebook)}
    assert bool(CJK.search(links.source)) == (edition(nb) != "en")


def test_the_readme_table_opens_every_notebook_of_both_editions():
    readme = (settings.REPO_ROOT / "README.md").read_text(encoding="utf-8")
    opened = {check_link(url) for url in LINK.findall(readme) if "colab." in url or "/kernels/welcome" in url}
    wanted = {release_path(path) for path in NOTEBOOKS if path.parent.parent.name != settings.SOURCE_DIRECTORY}
    assert opened == wanted, f"missing: {sorted(wanted - opened)}; extra: {sorted(opened - wanted)}"


def test_the_links_have_the_documented_forms():
    path = "notebooks/01_attention/01_attention.ipynb"
    assert hosted.colab_url(path, "1.2.3", "https://github.com/o/r") == (
        "https://colab.research.google.com/github/o/r/blob/v1.2.3/notebooks/01_attention/01_attention.ipynb")
    assert hosted.kaggle_url(path, "1.2.3", "https://github.com/o/r") == (
        "https://kaggle.com/kernels/welcome?src=https://github.com/o/r/blob/v1.2.3/notebooks/01_attention/"
        "01_attention.ipynb")
    assert hosted.install_url("1.2.3", "https://github.com/o/r") == "https://github.com/o/r/archive/refs/tags/v1.2.3.tar.gz"


def test_the_setup_cell_differs_between_editions_only_in_the_edition_it_names():
    english, chinese = (hosted.setup_cell(name, VERSION, gpu=True) for name in ("en", "zh"))
    assert english != chinese and hosted.edition_neutral(english) == hosted.edition_neutral(chinese)
    assert hosted.with_edition(english, "zh") == chinese


def run_cells(cells: list[str], folder: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run ``cells`` as a notebook saved in ``folder`` with its kernel started in ``cwd``; their printed text."""
    for variable in ("TFCOURSE_EDITION", "JPY_SESSION_NAME", *hosted.SERVICE_MARKERS):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("TFCOURSE_FAST", "1")
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["tfcourse"] = {"edition": "zh"}
    nbformat.write(notebook, folder / "zh.ipynb")
    client = NotebookClient(notebook, timeout=KERNEL_SECONDS, startup_timeout=KERNEL_SECONDS,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return "".join(output.get("text", "") for cell in notebook.cells for output in cell.outputs)


@pytest.mark.parametrize("place", ["beside an unmarked notebook", "kernel started in another folder"])
def test_a_chinese_notebook_speaks_chinese_wherever_its_kernel_starts(place, tmp_path, monkeypatch):
    """The two setups where the folder's notebooks decided English: the setup cell's edition decides now."""
    folder, elsewhere = tmp_path / "class", tmp_path / "elsewhere"
    folder.mkdir(), elsewhere.mkdir()
    if place == "beside an unmarked notebook":
        nbformat.write(new_notebook(), folder / "scratch.ipynb")
    cwd = folder if place == "beside an unmarked notebook" else elsewhere
    folder_zh = settings.REPO_ROOT / registry.editions()["zh"].release
    chinese = nbformat.read(folder_zh / "01_attention" / "01_attention.ipynb", as_version=4)
    setup_cell = next(cell.source for cell in chinese.cells if cell.id == hosted.SETUP_CELL_ID)
    says = "from tfcourse.messages import tr\nprint(tr('data:'))"
    without = run_cells([says], folder, cwd, monkeypatch)
    assert not CJK.search(without), f"{place}: without the setup cell the kernel already spoke Chinese: {without!r}"
    with_setup = run_cells([setup_cell, says], folder, cwd, monkeypatch)
    assert CJK.search(with_setup), f"{place}: the setup cell named zh, yet the kernel printed {with_setup!r}"


def test_the_grader_counts_the_setup_cell_of_either_edition_as_the_notebooks_own():
    """The static scan and the clean re-run compare a submission with the English source: a Chinese notebook's setup
    cell (which imports subprocess and names zh) is the notebook's own, not code the student added."""
    source = nbformat.read(settings.source_notebook("06_ag_news_classifier"), as_version=4)
    chinese = nbformat.read(release_notebook_path("zh", "06_ag_news_classifier"), as_version=4)
    assert static_scan.scan(chinese, source) == [] and clean_rerun.added_cells(chinese, source) == {}
    setup = next(cell for cell in chinese.cells if cell.id == hosted.SETUP_CELL_ID)
    setup.source += "\nimport ctypes"  # a student's edit of it is the student's code again
    assert any("ctypes" in finding for finding in static_scan.scan(chinese, source))
    assert clean_rerun.added_cells(chinese, source)
