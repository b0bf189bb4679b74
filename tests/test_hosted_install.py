"""A notebook on a hosted service, as Colab runs it: an environment holding only Python, PyTorch, Jupyter and pip.

The notebook (its student release, with the reference answers in its answer cells) lies alone in a folder; its
kernel starts in another one; Colab's marker is set. Its setup cell installs the course from a wheel built here
(standing in for the tagged release, through ``TFCOURSE_INSTALL_URL``), keeping the environment's PyTorch (the
Makefile's pinned wheel), and then every visible test runs in fast mode. Both editions; the Chinese notebook must
speak Chinese. ``make compat`` (benchmarks/compat.py) runs the same path for every notebook under another PyTorch.
"""

import importlib.metadata
import re
import subprocess
from pathlib import Path

import pytest

from autograder.course import settings
from benchmarks.compat import bare_environment, course_wheel, errors, run, run_hosted, with_answers
from editions.release import edition_notebook
from tfcourse import hosted

pytestmark = pytest.mark.slow

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> tuple[Path, Path]:
    """A venv with only PyTorch (the Makefile's pinned wheel), ipykernel, nbclient and pip; the course's wheel."""
    root = tmp_path_factory.mktemp("hosted")
    torch = f"torch=={importlib.metadata.version('torch')}"
    python = bare_environment(root / "venv", torch, ["-c", settings.REPO_ROOT / "requirements-lock.txt"])
    return python, course_wheel(python, root)


def printed(cell) -> str:
    return "".join(output.get("text", "") for output in cell.get("outputs", []))


def torch_version(python: Path) -> str:
    return run([python, "-c", "import importlib.metadata as m; print(m.version('torch'))"], 60).stdout.strip()


@pytest.mark.parametrize("edition, notebook", [("en", "01_attention"), ("zh", "06_ag_news_classifier")])
def test_a_notebook_installs_the_course_and_passes_its_visible_tests_on_a_bare_hosted_runtime(
    bare, tmp_path, edition, notebook
):
    python, wheel = bare
    # the other edition's run installed the course: this run's setup cell must install it again
    subprocess.run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "tfcourse"], capture_output=True, timeout=120)
    importable = subprocess.run([python, "-c", "import tfcourse"], capture_output=True, timeout=60, cwd=tmp_path)
    assert importable.returncode != 0, "the course is still importable in the bare environment"
    release = settings.release_notebook(notebook) if edition == "en" else edition_notebook(edition, notebook)
    torch_before = torch_version(python)
    ran, seconds = run_hosted(python, wheel, with_answers(release, notebook), tmp_path)
    print(f"\n{edition} {notebook}: setup cell {seconds:.1f} s (course installed from {wheel.name})")
    assert not errors(ran), errors(ran)
    assert torch_version(python) == torch_before, "the setup cell replaced the environment's PyTorch"
    setup = printed(next(cell for cell in ran.cells if cell.get("id") == hosted.SETUP_CELL_ID))
    assert "Colab" in setup, f"the setup cell did not report the service: {setup!r}"
    imports = printed(next(cell for cell in ran.cells if cell.cell_type == "code" and cell.id != hosted.SETUP_CELL_ID))
    assert bool(CJK.search(imports)) == (edition != "en"), f"the {edition} notebook printed {imports!r}"
    if notebook == "06_ag_news_classifier":  # the sample the package carries (its data files), without a checkout
        assert "share/tfcourse/ag_news_sample" in setup, setup
