"""The notebooks' setup cell: one first code cell that works on a course machine and on a hosted service.

Every notebook's first code cell is :func:`setup_cell`'s text, written by the release (``make release`` runs
``python -m editions.hosted``) with the version of ``pyproject.toml`` and its repository address, never typed
by hand. Where the course is installed the cell only names the notebook's edition (:func:`setup`). Where it is
not importable (Colab, Kaggle, a hosted notebook in mainland China) the cell first installs this package from
the course's tagged release on GitHub, at the notebook's own version, with the requirement
``torch==<the installed version>`` beside it: pip keeps the service's PyTorch (its CUDA build) and downloads only
the light dependencies the service lacks. ``TFCOURSE_INSTALL_URL`` replaces the address (a mirror, a wheel file;
the tests install a wheel they build).

The release also puts a cell of links above each notebook's title: open this notebook, at the same tag, on Colab
and on Kaggle (:func:`links_markdown`).
"""

from __future__ import annotations

import json
import os
import re
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from tfcourse import registry
from tfcourse.language import ENGLISH, record_edition, speaking
from tfcourse.messages import tr
from tfcourse.project import repository_url
from tfcourse.style import apply_course_style

INSTALL_URL_VARIABLE = "TFCOURSE_INSTALL_URL"
# Environment variables the services set in every kernel. Kaggle's first: its image is built on Colab's and sets
# COLAB_RELEASE_TAG too (Kaggle/kagglehub pull request 230).
SERVICE_MARKERS = {"KAGGLE_KERNEL_RUN_TYPE": "Kaggle", "COLAB_RELEASE_TAG": "Colab"}
SETUP_CELL_ID = "hosted-setup"
LINKS_CELL_ID = "hosted-links"
RELEASE_CELL_IDS = (LINKS_CELL_ID, SETUP_CELL_ID)  # the cells the release writes into every notebook
# What a notebook needs beyond the package: a GPU runtime (its training is meant for one), the AG News sample.
NEEDS = {"06_ag_news_classifier": {"gpu": True, "ag_news": True}, "07_language_model": {"gpu": True}}
SETUP_CALL = re.compile(r'^hosted\.setup\("(\w+)"', re.MULTILINE)


def tag(version: str) -> str:
    """The git tag of a release (docs/maintainers.md: ``vX.Y.Z``)."""
    return f"v{version}"


def install_url(version: str, repository: str | None = None) -> str:
    """The tagged release's source archive, which GitHub serves for every tag."""
    return f"{repository or repository_url()}/archive/refs/tags/{tag(version)}.tar.gz"


def setup_cell(edition: str, version: str, *, gpu: bool = False, ag_news: bool = False) -> str:
    """The text of a notebook's first code cell. It runs before the package can be imported: install, then import."""
    options = "".join(f", {name}=True" for name, wanted in (("gpu", gpu), ("ag_news", ag_news)) if wanted)
    return "\n".join([
        "# Where the course is not installed (Colab, Kaggle, a hosted notebook), install its helper package at this",
        "# notebook's version, keeping the service's PyTorch; then name this notebook's edition.",
        "import importlib.metadata",
        "import importlib.util",
        "import os",
        "import subprocess",
        "import sys",
        "",
        'if importlib.util.find_spec("tfcourse") is None:',
        f'    course = os.environ.get("{INSTALL_URL_VARIABLE}", "{install_url(version)}")',
        '    torch_now = f"torch=={importlib.metadata.version(\'torch\')}"  # the service\'s own build, kept',
        '    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", course, torch_now], check=True)',
        "    importlib.invalidate_caches()",
        "from tfcourse import hosted",
        "",
        f'hosted.setup("{edition}", version="{version}"{options})',
    ])


def with_edition(source: str, edition: str) -> str:
    """A setup cell's text naming ``edition`` instead (any other text unchanged)."""
    return SETUP_CALL.sub(f'hosted.setup("{edition}"', source)


def edition_neutral(source: str) -> str:
    """A cell's text with the edition its setup call names blanked: the same cell in every edition."""
    return with_edition(source, "*")


def notebook_url(path: str, version: str, repository: str | None = None) -> str:
    """The address of a notebook (``path`` inside the repository) at the release's tag on GitHub."""
    return f"{repository or repository_url()}/blob/{tag(version)}/{path}"


def colab_url(path: str, version: str, repository: str | None = None) -> str:
    """Colab opens a notebook on GitHub at colab.research.google.com/github/OWNER/REPO/blob/REF/PATH."""
    github = notebook_url(path, version, repository)
    return github.replace("https://github.com/", "https://colab.research.google.com/github/", 1)


def kaggle_url(path: str, version: str, repository: str | None = None) -> str:
    """Kaggle imports a public notebook into a new one at kaggle.com/kernels/welcome?src=URL."""
    return f"https://kaggle.com/kernels/welcome?src={notebook_url(path, version, repository)}"




def links_markdown(path: str, edition: str, version: str) -> str:
    """The cell of links above a notebook's title: this notebook, at the release's tag, on Colab and Kaggle."""
    with speaking(edition):
        links = [tr("[Open in Colab]({url})", url=colab_url(path, version)),
                 tr("[Open in Kaggle]({url})", url=kaggle_url(path, version))]
        if edition != ENGLISH:
            links.append(tr("[Other hosted notebooks (mainland China)]({url})",
                            url=f"{repository_url()}/blob/{tag(version)}/docs/students.md#hosted-notebooks"))
        return " · ".join(links) + "\n\n" + tr(
            "The first code cell installs what the notebook needs there; on your own machine it only names the "
            "notebook's edition.")


def marked_service() -> str | None:
    """The hosted service whose marker this kernel's environment carries (Kaggle's first), else None."""
    return next((name for variable, name in SERVICE_MARKERS.items() if os.environ.get(variable)), None)


def service() -> str | None:
    """The hosted service this kernel runs on, by its marker; else "a hosted notebook" when the course was
    installed from an archive (the setup cell's install: PEP 610's ``direct_url.json``); else None."""
    if (name := marked_service()) is not None:
        return name
    try:
        origin = json.loads(distribution("tfcourse").read_text("direct_url.json") or "{}")
    except (PackageNotFoundError, ValueError):
        return None
    return tr("a hosted notebook") if "archive_info" in origin else None


def gpu_report(name: str, wants_gpu: bool) -> str:
    """Which GPU this kernel sees; for a notebook meant for one, how to get one on ``name`` when there is none."""
    import torch  # the setup cell may run before torch is needed

    if torch.cuda.is_available():
        properties = torch.cuda.get_device_properties(0)
        return tr("GPU: {gpu} ({memory:.0f} GB)", gpu=properties.name, memory=properties.total_memory / 2**30)
    if not wants_gpu:
        return tr("no GPU: this notebook is written for a CPU.")
    steps = {
        "Colab": tr("Runtime > Change runtime type > a GPU (T4 on the free tier) > Save"),
        "Kaggle": tr("the notebook's session options > Accelerator > a GPU"),
    }.get(name, tr("start the notebook on a GPU instance (docs/students.md, Hosted notebooks)"))
    return tr("no GPU: this notebook's full run trains models and is meant for a GPU. To get one: {steps}; then run "
              "the notebook again from the top.", steps=steps)


def setup(edition: str, *, version: str, gpu: bool = False, ag_news: bool = False) -> None:
    """The setup cell's work once the package imports: name the edition; on a hosted service, say what it found."""
    record_edition(edition)
    apply_course_style()  # the Chinese edition's font, now that the edition is known
    name = service()
    if name is None:
        return
    from tfcourse import __version__

    print(tr("{service}: course helpers {installed} (this notebook is version {version})",
             service=name, installed=__version__, version=version))
    if __version__ != version:
        print(tr("the installed helpers are another version: run `pip install --force-reinstall {url}`, then restart "
                 "the kernel.", url=install_url(version)))
    if ag_news:
        from tfcourse import agnews

        print(tr("data:"), agnews.sample_files().source)
    print(gpu_report(name, gpu))


def release_version() -> str:
    """The version ``pyproject.toml`` states (release time: the repository is at hand)."""
    import tomllib

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]


def stamp(notebook, release_path: str, version: str, needs: dict[str, bool] | None = None,
          edition: str | None = None) -> None:
    """Write the links cell (first) and the setup cell (before the first code cell) into ``notebook``, in
    ``edition`` (by default the one its metadata names); ``release_path`` is where the student release of this
    edition lies in the repository. ``needs`` (:data:`NEEDS`): None keeps the options of the setup cell there."""
    from nbformat.v4 import new_code_cell, new_markdown_cell  # release time only

    edition = edition or notebook.metadata.get("tfcourse", {}).get("edition", ENGLISH)
    cells = {cell.get("id"): cell for cell in notebook.cells}
    links = cells.get(LINKS_CELL_ID) or new_markdown_cell(id=LINKS_CELL_ID)
    setup_code = cells.get(SETUP_CELL_ID) or new_code_cell(id=SETUP_CELL_ID)
    links.source = links_markdown(release_path, edition, version)
    if needs is None:
        setup_code.source = with_edition(setup_code.source, edition)
    else:
        setup_code.source = setup_cell(edition, version, **needs)
    rest = [cell for cell in notebook.cells if cell.get("id") not in RELEASE_CELL_IDS]
    first_code = next(index for index, cell in enumerate(rest) if cell.cell_type == "code")
    notebook.cells = [links, *rest[:first_code], setup_code, *rest[first_code:]]


README_ROW = re.compile(r"^\| `(?P<name>\d\d_\w+)` \| (?P<builds>(?:[^|`]|`[^`]*`)+?) \|(?: [^\n]*\|)?$", re.MULTILINE)
README_HEADER = ("| notebook | you build |\n| --- | --- |\n", "| notebook | you build | open |\n| --- | --- | --- |\n")


def readme_with_links(readme: str, version: str, release_path) -> str:
    """The README's notebook table with a column opening each notebook, English and Chinese, on Colab and Kaggle;
    ``release_path(name, edition)`` is the notebook's path in the repository."""

    def links(name: str, edition: str) -> str:
        where = release_path(name, edition)
        return f"[Colab]({colab_url(where, version)}) · [Kaggle]({kaggle_url(where, version)})"

    def row(found: re.Match) -> str:
        name = found["name"]
        others = [f"{registry.editions()[code].name} {links(name, code)}" for code in registry.translated()]
        return f"| `{name}` | {found['builds']} | {' · '.join([links(name, ENGLISH), *others])} |"

    return README_ROW.sub(row, readme.replace(*README_HEADER))
