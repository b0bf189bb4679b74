"""Where the course lives, every setting a user may change, and how nbgrader is configured for it.

Each setting is a traitlet of a ``Configurable`` class below, as nbgrader declares its own, set in the course's
``nbgrader_config.py`` or on the command line (:func:`load_config`; docs/instructors.md, Settings).
One function, :func:`configure`, writes every nbgrader setting the course needs into a traitlets ``Config``.
The repository's ``nbgrader_config.py`` calls it with the repository root;
:meth:`autograder.course.course.Course.config` with any course's.
"""

import os
import stat
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path

from traitlets import Float, Int, Unicode
from traitlets.config import Config, Configurable, KVArgParseConfigLoader, PyFileConfigLoader

from autograder.course.paths import AUTOGRADED, FEEDBACK, GRADING_DIRECTORY, GradingFolder

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRECTORY = "solutions"
RELEASE_DIRECTORY = "notebooks"
DATA_DIRECTORY = "data"  # what a graded notebook may read (tfcourse finds its data there too)
CONFIG_FILE = "nbgrader_config.py"  # in the course's root: the instructor's settings (see load_config)
# The formgrader's maths: MathJax 2 from the jupyter-server-mathjax package, which the server
# serves under its static path (its config folder enables it), relative to the server's base URL.
FORMGRADER_MATHJAX = "static/jupyter_server_mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe"
TEMPLATES = Path(__file__).resolve().parent / "templates"
# The instructor's Jupyter server settings (the page policy extension): a folder on JUPYTER_CONFIG_PATH for
# `make instructor-lab`, copied into the hub's instructor settings by classroom/provision.py.
INSTRUCTOR_SERVER_CONFIG = Path(__file__).resolve().parent / "jupyter"


class Settings(Configurable):
    """A group of settings. Each takes its variable (``env_prefix`` and its name, or its ``env`` tag) where that is set
    and the configuration does not set it: the configuration wins, then the variable, then the default."""

    env_prefix = ""

    @classmethod
    def variable(cls, name: str) -> str | None:
        prefixed = cls.env_prefix + name.upper() if cls.env_prefix else None
        return cls.class_traits()[name].metadata.get("env") or prefixed

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        section = self.config.get(type(self).__name__, {})
        for name, trait in self.traits(config=True).items():
            value = os.environ.get(self.variable(name) or "", "").strip()
            if value and name not in section and name not in kwargs:
                setattr(self, name, trait.from_string(value))


class CourseSettings(Settings):
    """The course as nbgrader knows it: every user's nbgrader settings carry these."""

    course_id = Unicode("transformers-from-scratch", help="nbgrader's course id: the exchange's course folder").tag(
        config=True)
    cell_timeout = Int(120, help="Most seconds a cell may run, in Validate and grading (Execute.timeout)").tag(
        config=True)
    ngshare_url = Unicode("", help="The ngshare exchange's address (empty: nbgrader's folder exchange); the hub gives "
                          "it to every server").tag(config=True, env="TFCOURSE_NGSHARE_URL")


class GradeSettings(Settings):
    """``python -m autograder grade``'s limits on each submission (its flags, where given, win)."""

    jobs = Int(2, help="Submissions graded in parallel").tag(config=True)
    wall_seconds = Float(900.0, help="Wall-clock seconds per submission").tag(config=True)
    memory_gib = Float(4.0, help="GiB of address space per process of a submission").tag(config=True)
    reference_factor = Float(10.0, help="A cell's limit: this times the reference answers' time for it, plus "
                             "reference_margin, at most CourseSettings.cell_timeout").tag(config=True)
    reference_margin = Float(5.0, help="Seconds for jitter and a one-off cost (a first import)").tag(config=True)


class HubSettings(Settings):
    """The one-machine hub (classroom/jupyterhub_config.py): ``make hub MEM_LIMIT=3G`` sets TFCOURSE_HUB_MEM_LIMIT."""

    env_prefix = "TFCOURSE_HUB_"
    prefix = Unicode("/srv/tfcourse", help="The folder classroom.provision laid out").tag(config=True)
    ip = Unicode("127.0.0.1", help="The address the hub listens on").tag(config=True)
    port = Int(8000, help="The hub's port; its API listens on the next, the proxy's API on the one after").tag(
        config=True)
    auth = Unicode("pam", help="pam (system passwords), lti11 or lti13 (state/lti11.json, lti13.json)").tag(config=True)
    state = Unicode("", help="The hub's database, cookie secret, LTI settings (empty: state/ in prefix)").tag(
        config=True)
    extra_config = Unicode("", help="A further JupyterHub config file, loaded last").tag(config=True)
    mem_limit = Unicode("2G", help="Each student's memory (0: none)").tag(config=True)
    cpu_limit = Unicode("1", help="Each student's cores (0: none)").tag(config=True)
    tasks_limit = Unicode("512", help="Each student's processes and threads together (0: none)").tag(config=True)
    disk_limit = Unicode("0", help="Each student's home, a filesystem of this size (0: off)").tag(config=True)
    ngshare_mem_limit = Unicode("1G", help="The ngshare service's memory (0: none)").tag(config=True)
    cull_idle = Int(3600, help="Seconds after which an idle server is stopped (0: never)").tag(config=True)
    kernel_cull_idle = Int(1800, help="Seconds after which an idle kernel no tab shows stops (0: never)").tag(
        config=True)
    due_dates_every = Int(30, help="Seconds between two looks at due dates, extensions, languages").tag(config=True)


class GradescopeSettings(Settings):
    """Gradescope's autograder zip (``python -m autograder gradescope``, autograder/gradescope/): the defaults its
    scripts are built with; on Gradescope, its variables (set in the image) win, as the scripts read them."""

    root = Unicode("/autograder", help="Where Gradescope's harness puts the zip's files, the submission and "
                   "results.json (its Autograder Specifications)").tag(config=True, env="TFCOURSE_GRADESCOPE_ROOT")
    torch_index = Unicode("https://download.pytorch.org/whl/cpu", help="Where setup.sh installs the pinned CPU build "
                          "of torch from (its variable set empty: pip's own sources)").tag(
        config=True, env="TFCOURSE_TORCH_INDEX")


SETTINGS = (CourseSettings, GradeSettings, HubSettings, GradescopeSettings)


def load_config(root: Path = REPO_ROOT, argv: Sequence[str] = ()) -> Config:
    """The course's settings: ``root``'s ``nbgrader_config.py`` (where there is one), then ``--Class.trait=value``
    arguments in ``argv``. The grader, provision and the Gradescope zip read their settings from this ``Config``
    (``GradeSettings(config=load_config(root))``); a file in a student's folder is never read."""
    config = Config()
    if (Path(root) / CONFIG_FILE).is_file():
        config.merge(PyFileConfigLoader(CONFIG_FILE, path=str(root)).load_config())
    if argv:
        config.merge(KVArgParseConfigLoader(list(argv), classes=list(SETTINGS)).load_config())
    return config


def every_users_settings(course: CourseSettings) -> str:
    """The nbgrader settings every user's server reads (config file lines): the one-machine hub's and Kubernetes'."""
    return (
        f"c.CourseDirectory.course_id = {course.course_id!r}\n"
        "# A student's Validate allows each cell what grading allows (nbgrader's own default is 30 s: on a busy hub a\n"
        "# training cell of 06 passed it, and the validation failed where grading would not).\n"
        f"c.Execute.timeout = {course.cell_timeout}\n"
    )


def assignment_ids(root: Path = REPO_ROOT) -> list[str]:
    """The assignments, one per notebook folder in ``solutions/`` (``01_attention``, ...)."""
    return sorted(p.parent.name for p in (root / SOURCE_DIRECTORY).glob("*/*.ipynb") if p.stem == p.parent.name)


def source_notebook(assignment_id: str, root: Path = REPO_ROOT) -> Path:
    return root / SOURCE_DIRECTORY / assignment_id / f"{assignment_id}.ipynb"


def release_notebook(assignment_id: str, root: Path = REPO_ROOT, release: str = RELEASE_DIRECTORY) -> Path:
    """The student notebook of ``assignment_id`` in the release folder ``release`` (a translated edition's: its own)."""
    return root / release / assignment_id / f"{assignment_id}.ipynb"


def configure(c: Config, root: Path, grading_directory: str = GRADING_DIRECTORY) -> Config:
    """Set the course's nbgrader options on ``c`` for a course rooted at ``root``."""
    root = Path(root).resolve()
    c.CourseDirectory.root = str(root)
    course = CourseSettings(config=c)
    c.CourseDirectory.course_id = course.course_id
    c.CourseDirectory.source_directory = SOURCE_DIRECTORY
    c.CourseDirectory.release_directory = RELEASE_DIRECTORY
    grading = GradingFolder(root, grading_directory)
    c.CourseDirectory.submitted_directory = str(grading.submitted().relative_to(root))
    c.CourseDirectory.autograded_directory = str(grading.path.relative_to(root) / AUTOGRADED)
    c.CourseDirectory.feedback_directory = str(grading.path.relative_to(root) / FEEDBACK)
    c.CourseDirectory.db_url = f"sqlite:///{grading.gradebook}"
    if not grading.path.exists():
        grading.path.mkdir(parents=True)
        if root.stat().st_mode & stat.S_ISGID:  # a course folder its group shares (the hub's): the group writes too
            grading.path.chmod(0o2770)
    # Per-cell limit honoured by validate and autograde; a cell past it is interrupted
    # and grading goes on with the next cell.
    c.Execute.timeout = course.cell_timeout
    c.Execute.interrupt_on_timeout = True
    # Collect from the exchange trusting nothing a student wrote there: links, other accounts'
    # files, the time in the folder's name (autograder/pipeline/exchange/exchange_collect.py). On a hub whose
    # exchange is ngshare (its servers have CourseSettings.ngshare_url, classroom/jupyterhub_config.py), the
    # same collect reads ngshare's API (ngshare_collect.py) and every other step stays ngshare's: in the
    # course folder this file is read after the hub's settings, whose exchange it must not undo.
    exchange = "autograder.pipeline.exchange"
    if course.ngshare_url:
        c.ExchangeFactory.collect = f"{exchange}.ngshare_collect.SafeNgshareCollect"
    else:
        c.ExchangeFactory.collect = f"{exchange}.exchange_collect.SafeExchangeCollect"
        # Release feedback one student at a time: a feedback folder without its secret or timestamp is skipped and
        # said, the others still get theirs; no page's name in the log (exchange_release_feedback.py).
        c.ExchangeFactory.release_feedback = f"{exchange}.exchange_release_feedback.SafeReleaseFeedback"
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
    nbgrader = find_spec("nbgrader")  # found, not imported (an import takes seconds)
    if nbgrader is None:  # an environment without nbgrader (a hub's own, where the course is being installed)
        return c
    nbgrader_templates = str(Path(nbgrader.origin).parent / "server_extensions" / "formgrader" / "templates")
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

# The course's requirements (requirements.txt's pins) that grading a notebook needs: the notebooks' imports,
# the helper package's and the grader's. The zip's setup.sh installs these, constrained by requirements-lock.txt.
GRADESCOPE_REQUIREMENTS = (
    "torch", "numpy", "pandas", "matplotlib", "seaborn", "babel", "noto-cjk-sans-otc", "tqdm", "psutil",
    "ipykernel", "nbgrader", "alembic", "nbclient", "nbconvert", "nbformat",
)
