"""Where the course lives and how nbgrader is configured for it.

The names of the course's folders and its limits are defined here once. One function,
:func:`configure`, writes every nbgrader setting the course needs into a traitlets ``Config``.
The repository's ``nbgrader_config.py`` calls it with the repository root;
:meth:`autograder.course.course.Course.config` with any course's.
"""

import os
from importlib.util import find_spec
from pathlib import Path

from traitlets.config import Config

from autograder.course.paths import AUTOGRADED, FEEDBACK, GRADING_DIRECTORY, GradingFolder

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRECTORY = "solutions"
RELEASE_DIRECTORY = "notebooks"
DATA_DIRECTORY = "data"  # what a graded notebook may read (tfcourse finds its data there too)
CELL_TIMEOUT_SECONDS = 120
# Set (to the service's address) where the classroom hub's exchange is ngshare: classroom/jupyterhub_config.py
# gives it to every server, and each user's nbgrader settings (classroom/provision.py) read it.
NGSHARE_URL_VARIABLE = "TFCOURSE_NGSHARE_URL"
# The formgrader's maths: MathJax 2 from the jupyter-server-mathjax package, which the server
# serves under its static path (its config folder enables it), relative to the server's base URL.
FORMGRADER_MATHJAX = "static/jupyter_server_mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
TEMPLATES = Path(__file__).resolve().parent / "templates"
# The instructor's Jupyter server settings (the page policy extension): a folder on JUPYTER_CONFIG_PATH for
# `make instructor-lab`, copied into the hub's instructor settings by classroom/provision.py.
INSTRUCTOR_SERVER_CONFIG = Path(__file__).resolve().parent / "jupyter"


def assignment_ids(root: Path = REPO_ROOT) -> list[str]:
    """The assignments, one per notebook folder in ``solutions/`` (``01_attention``, ...)."""
    return sorted(p.parent.name for p in (root / SOURCE_DIRECTORY).glob("*/*.ipynb") if p.stem == p.parent.name)


def source_notebook(assignment_id: str, root: Path = REPO_ROOT) -> Path:
    return root / SOURCE_DIRECTORY / assignment_id / f"{assignment_id}.ipynb"


def release_notebook(assignment_id: str, root: Path = REPO_ROOT) -> Path:
    return root / RELEASE_DIRECTORY / assignment_id / f"{assignment_id}.ipynb"


def configure(c: Config, root: Path, grading_directory: str = GRADING_DIRECTORY) -> Config:
    """Set the course's nbgrader options on ``c`` for a course rooted at ``root``."""
    root = Path(root).resolve()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = "transformers-from-scratch"
    c.CourseDirectory.source_directory = SOURCE_DIRECTORY
    c.CourseDirectory.release_directory = RELEASE_DIRECTORY
    grading = GradingFolder(root, grading_directory)
    c.CourseDirectory.submitted_directory = str(grading.submitted().relative_to(root))
    c.CourseDirectory.autograded_directory = str(grading.path.relative_to(root) / AUTOGRADED)
    c.CourseDirectory.feedback_directory = str(grading.path.relative_to(root) / FEEDBACK)
    c.CourseDirectory.db_url = f"sqlite:///{grading.gradebook}"
    grading.path.mkdir(parents=True, exist_ok=True)
    # Per-cell limit honoured by validate and autograde; a cell past it is interrupted
    # and grading goes on with the next cell.
    c.Execute.timeout = CELL_TIMEOUT_SECONDS
    c.Execute.interrupt_on_timeout = True
    # Collect from the exchange trusting nothing a student wrote there: links, other accounts'
    # files, the time in the folder's name (autograder/pipeline/exchange_collect.py). On a hub whose
    # exchange is ngshare (its servers have NGSHARE_URL_VARIABLE, classroom/jupyterhub_config.py), the
    # same collect reads ngshare's API (ngshare_collect.py) and every other step stays ngshare's: in the
    # course folder this file is read after the hub's settings, whose exchange it must not undo.
    if os.environ.get(NGSHARE_URL_VARIABLE):
        c.ExchangeFactory.collect = "autograder.pipeline.ngshare_collect.SafeNgshareCollect"
    else:
        c.ExchangeFactory.collect = "autograder.pipeline.exchange_collect.SafeExchangeCollect"
        # Release feedback one student at a time: a feedback folder without its secret or timestamp is skipped and
        # said, the others still get theirs; no page's name in the log (exchange_release_feedback.py).
        c.ExchangeFactory.release_feedback = "autograder.pipeline.exchange_release_feedback.SafeReleaseFeedback"
    # What the release puts where an answer goes: its error names the TODO still open, in the reader's language
    # (every notebook's setup imports tfcourse).
    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError(tfcourse.todo_left())"}
    # nbgrader re-inserts edited test cells but not deleted ones unless told to.
    c.OverwriteCells.add_missing_cells = True
    # nbgrader's steps before it runs a submission, and one of the course's: once the hidden tests are back
    # from the gradebook, their messages are put in the submission's edition (hidden_messages.py).
    c.Autograde.sanitize_preprocessors = [
        "nbgrader.preprocessors.ClearOutput",
        "nbgrader.preprocessors.DeduplicateIds",
        "nbgrader.preprocessors.OverwriteKernelspec",
        "nbgrader.preprocessors.OverwriteCells",
        "autograder.course.hidden_messages.TranslateHiddenTests",
        "nbgrader.preprocessors.CheckCellMetadata",
    ]
    # nbgrader's formgrader page loads MathJax from a CDN (its template ignores mathjax_url): the
    # course's formgrade template (templates/formgrade/) loads HTMLExporter.mathjax_url instead.
    # Only the formgrader's template is replaced; generate_feedback keeps nbgrader's own.
    nbgrader_package = Path(find_spec("nbgrader").origin).parent  # found, not imported (an import takes seconds)
    nbgrader_templates = str(nbgrader_package / "server_extensions" / "formgrader" / "templates")
    c.HTMLExporter.mathjax_url = FORMGRADER_MATHJAX
    # A student's notebook is drawn in the instructor's session: its Markdown and outputs reduced to inert markup
    # (safe_html.py), beside the page's script policy (page_policy.py, INSTRUCTOR_SERVER_CONFIG).
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.filters = {"clean_html": "autograder.course.safe_html.safe_html"}
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES), nbgrader_templates]
    c.HTMLExporter.extra_template_paths = [nbgrader_templates]  # for {% extends 'formgrade/index.html.j2' %}
    return c


def course_config(root: Path, grading_directory: str = GRADING_DIRECTORY) -> Config:
    """A fresh ``Config`` for a course rooted at ``root``."""
    return configure(Config(), root, grading_directory)

# Gradescope's autograder (``python -m autograder gradescope``, autograder/gradescope/): where its harness puts
# the zip's files, the submission and the results (Gradescope's "Autograder Specifications",
# https://gradescope-autograders.readthedocs.io/en/latest/specs/), read from this variable when set (a test's
# simulated tree), and where setup.sh installs the pinned CPU build of torch from (empty: pip's own sources).
GRADESCOPE_ROOT = "/autograder"
GRADESCOPE_ROOT_VARIABLE = "TFCOURSE_GRADESCOPE_ROOT"
GRADESCOPE_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
GRADESCOPE_TORCH_INDEX_VARIABLE = "TFCOURSE_TORCH_INDEX"
# The course's requirements (requirements.txt's pins) that grading a notebook needs: the notebooks' imports,
# the helper package's and the grader's. The zip's setup.sh installs these, constrained by requirements-lock.txt.
GRADESCOPE_REQUIREMENTS = (
    "torch", "numpy", "pandas", "matplotlib", "seaborn", "babel", "noto-cjk-sans-otc", "tqdm", "psutil",
    "ipykernel", "nbgrader", "alembic", "nbclient", "nbconvert", "nbformat",
)  # fmt: skip
