"""A notebook on a hosted service, as Colab runs it: an environment holding only Python, PyTorch, Jupyter and pip.

The notebook (its student release, with the reference answers in its answer cells) lies alone in a folder; its
kernel starts in another one; Colab's marker is set. Its setup cell installs the course from a wheel built here
(standing in for the tagged release, through ``TFCOURSE_INSTALL_URL``), keeping the environment's PyTorch, and
then every visible test runs in fast mode. Both editions; the Chinese notebook must speak Chinese.
"""

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from nbformat import NotebookNode

from autograder.course import settings
from autograder.course.notebooks import grade_id, is_answer_cell
from editions.release import release_notebook
from tests.support.notebooks import answer_cells, read
from tfcourse import hosted

pytestmark = pytest.mark.slow

ROOT = settings.REPO_ROOT
# What the wheel is built from: the package's folders, its licence and the sample it ships.
PACKAGE_FILES = ("pyproject.toml", "LICENSE", "tfcourse", "autograder", "benchmarks", "editions", "data/ag_news_sample")
CJK = re.compile(r"[\u4e00-\u9fff]")
INSTALL_SECONDS = 420  # torch's wheel unpacked into a fresh venv: about a minute on a busy 2-core machine
RUN_SECONDS = 300
# Runs inside the bare environment: the notebook with nbclient, its kernel started in argv[3].
RUNNER = """
import sys, nbformat
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
client = NotebookClient(notebook, timeout=240, startup_timeout=120, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[3]}})
try:
    client.execute()
finally:
    nbformat.write(notebook, sys.argv[2])
"""


def run(command: list, timeout: float, **options) -> subprocess.CompletedProcess:
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=timeout, **options)
    assert done.returncode == 0, f"{command[:4]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> tuple[Path, Path]:
    """A venv with only PyTorch (the Makefile's pinned wheel), ipykernel and nbclient; the course's wheel."""
    root = tmp_path_factory.mktemp("hosted")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", venv], 120)
    python = venv / "bin" / "python"
    torch = f"torch=={importlib.metadata.version('torch')}"
    pins = ["ipykernel", "nbclient"]
    # --no-compile: no .pyc for torch's thousands of modules (half of the install's time here)
    run([python, "-m", "pip", "install", "--quiet", "--no-compile", torch, *pins, "-c", ROOT / "requirements-lock.txt"],
        INSTALL_SECONDS)
    source = root / "source"
    (source / "data").mkdir(parents=True)
    for name in PACKAGE_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, source / name)
    run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", source, "-w", root / "wheel"], 300)
    (wheel,) = (root / "wheel").glob("tfcourse-*.whl")
    return python, wheel


def with_answers(release: Path, assignment: str) -> NotebookNode:
    """The student release with the reference answers in its answer cells: what a student who is done runs."""
    notebook, answers = read(release), answer_cells(read(settings.source_notebook(assignment)))
    for cell in notebook.cells:
        if is_answer_cell(cell) and cell.cell_type == "code":
            cell.source = answers[grade_id(cell)].source
    return notebook


def run_hosted(python: Path, wheel: Path, notebook: NotebookNode, folder: Path) -> tuple[NotebookNode, float]:
    """Run the notebook alone in ``folder``, its kernel in another, as on Colab: (the notebook run, setup seconds)."""
    (folder / "notebook").mkdir(parents=True)
    (folder / "kernel").mkdir()
    path = folder / "notebook" / "notebook.ipynb"
    nbformat.write(notebook, path)
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("TFCOURSE_", "JPY_", "VIRTUAL_ENV", "PYTHONPATH", "NBGRADER"))}
    environment |= {"COLAB_RELEASE_TAG": "release-colab-test", hosted.INSTALL_URL_VARIABLE: wheel.as_uri(),
                    "TFCOURSE_FAST": "1", "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}",
                    "PIP_NO_COMPILE": "1"}  # pip's own setting on this machine: no .pyc (time), not the cell's
    done = folder / "done.ipynb"
    run([python, "-c", RUNNER, path, done, folder / "kernel"], RUN_SECONDS, cwd=folder / "kernel", env=environment)
    ran = nbformat.read(done, as_version=4)
    setup = next(cell for cell in ran.cells if cell.get("id") == hosted.SETUP_CELL_ID)
    timing = setup.metadata["execution"]
    started, replied = (datetime.fromisoformat(timing[key]) for key in ("iopub.execute_input", "shell.execute_reply"))
    return ran, (replied - started).total_seconds()


def printed(cell: NotebookNode) -> str:
    return "".join(output.get("text", "") for output in cell.get("outputs", []))


@pytest.mark.parametrize("edition, notebook", [("en", "01_attention"), ("zh", "06_ag_news_classifier")])
def test_a_notebook_installs_the_course_and_passes_its_visible_tests_on_a_bare_hosted_runtime(
    bare, tmp_path, edition, notebook
):
    python, wheel = bare
    if _installed(python):  # the other edition's run installed it: this run installs it again
        run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "tfcourse"], 120)
    release = settings.release_notebook(notebook) if edition == "en" else release_notebook(edition, notebook)
    torch_before = _torch(python)
    ran, seconds = run_hosted(python, wheel, with_answers(release, notebook), tmp_path)
    print(f"\n{edition} {notebook}: setup cell {seconds:.1f} s (course installed from {wheel.name})")
    assert _torch(python) == torch_before, "the setup cell replaced the environment's PyTorch"
    setup = printed(next(cell for cell in ran.cells if cell.get("id") == hosted.SETUP_CELL_ID))
    assert "Colab" in setup, f"the setup cell did not report the service: {setup!r}"
    imports = printed(next(cell for cell in ran.cells if cell.cell_type == "code" and cell.id != hosted.SETUP_CELL_ID))
    assert bool(CJK.search(imports)) == (edition != "en"), f"the {edition} notebook printed {imports!r}"
    errors = [output for cell in ran.cells for output in cell.get("outputs", []) if output.output_type == "error"]
    assert not errors, errors
    assert json.dumps(ran.metadata.get("tfcourse", {})) == json.dumps(read(release).metadata.get("tfcourse", {}))


def _installed(python: Path) -> bool:
    return subprocess.run([python, "-c", "import tfcourse"], capture_output=True, timeout=60).returncode == 0


def _torch(python: Path) -> str:
    code = "import importlib.metadata as m; print(m.version('torch'))"
    return run([python, "-c", code], 60).stdout.strip()
