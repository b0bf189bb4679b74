"""Shared fixtures: fast mode for every kernel, the venv's programs on PATH, per-assignment caches.

The suite runs on pytest-xdist workers (``make test``). Tests that share an expensive fixture
(a graded course, the built book, a JupyterLab server) are sent to one worker as one unit of
work (``--dist loadgroup``, :func:`work_unit`), so each fixture is still built once per run; the
timings the workers record come back to the summary at the end.
"""

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

# One math-library thread per process: the suite runs several workers (and their kernels) on two
# cores, and two-thread pools spinning against each other made a half-second test take 50 s.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ["TFCOURSE_FAST"] = "1"  # inherited by every kernel the tests start
os.environ["MPLBACKEND"] = "Agg"
os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # keeps debugpy's frozen-modules note off stderr
# nbgrader runs `alembic` by name: put this interpreter's bin folder first.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

from autograder.course import settings
from autograder.course.course import Course
from autograder.course.settings import assignment_ids
from testbed.nbgrader_course import GradedRun, grade_release_submissions
from testbed.notebooks import read
from testbed.variants import VARIANTS
from tests.support import grading_pool
from tests.support.course import ThrowawayCourse
from tests.support.grading_seed import seed
from tests.support.harness import (
    BROWSER_ARTIFACTS,
    SHARED_FOLDER_ENV,
    alternative_waves,
    combined_variants,
    inprocess_notebook,
)
from tests.support.inprocess import InProcessNotebook
from tfcourse import language

# pytest keeps each test module's assertion-rewritten bytecode in __pycache__ unless bytecode is not written: where
# PYTHONDONTWRITEBYTECODE is set (some containers), every worker rewrote all 150 modules at each run: collection took
# 13 s against 5 s cached. The suite's own processes write it (the folders are git-ignored and every copy of the
# repository leaves them out); the variable still holds for the processes they start.
sys.dont_write_bytecode = False

# Made once, in the controller (or the only process); the xdist workers inherit the variable.
os.environ.setdefault(SHARED_FOLDER_ENV, tempfile.mkdtemp(prefix="tfcourse-tests-"))

ASSIGNMENTS = assignment_ids()
TIMINGS: dict[str, float] = {}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "variant" in metafunc.fixturenames:
        cases = [(a, v) for a in ASSIGNMENTS for v in VARIANTS.get(a, [])]
        metafunc.parametrize(("assignment", "variant"), cases, ids=[f"{a}:{v.id}" for a, v in cases])
        return
    if "wave" in metafunc.fixturenames:  # wave 0, each cell's first alternative, is test_autograde.py's
        cases = [(a, w) for a in ASSIGNMENTS for w in alternative_waves(a)[1:]]
        ids = [f"{a}:" + "+".join(v.id for v in w) for a, w in cases]
        metafunc.parametrize(("assignment", "wave"), cases, ids=ids)
        return
    if "assignment" in metafunc.fixturenames:
        metafunc.parametrize("assignment", ASSIGNMENTS, scope="session")


@pytest.fixture(autouse=True)
def no_recorded_edition(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts and ends with no edition recorded: a notebook's setup cell run in this process (the
    in-process harness) records its edition for the rest of the process, as it does for a kernel."""
    monkeypatch.setattr(language, "_recorded", None)


@pytest.fixture(scope="session")
def source_nb(assignment: str):
    return read(settings.source_notebook(assignment))


@pytest.fixture(scope="session")
def release_nb(assignment: str):
    return read(settings.release_notebook(assignment))


@pytest.fixture
def inprocess(assignment: str) -> InProcessNotebook:
    return inprocess_notebook(assignment)


@pytest.fixture(scope="session")
def throwaway_course(tmp_path_factory: pytest.TempPathFactory) -> ThrowawayCourse:
    """Makes throw-away courses (see tests/support/course.py): every test that grades, exports or
    builds a course works in one of these, never in the repository. ``seeded=True`` (a course with its
    release, about to be graded): it starts with the run's gradebook templates and reference times."""

    def make(*assignments: str, name: str = "course", release: bool = True, seeded: bool = False) -> Course:
        course = Course.default().copy_to(tmp_path_factory.mktemp(name), assignments, release)
        if release and seeded:  # the run's template gradebooks and reference times (tests/support/grading_seed.py)
            seed(course, list(assignments))
        return course

    return make


@pytest.fixture(scope="session")
def graded(assignment: str, throwaway_course: ThrowawayCourse) -> GradedRun:
    """One real nbgrader course per assignment: the untouched release, the alternatives and the mutants autograded.

    The reference answers' own full marks are proven by the course's grader (tests/grader/test_every_notebook.py),
    whose nbgrader runs the same cells; here the alternatives (another correct answer in every cell) prove that
    plain nbgrader grades a correct notebook to full marks."""
    course = throwaway_course(assignment, name=f"course-{assignment}", release=False)
    run = grade_release_submissions(assignment, course, extra=combined_variants(assignment))
    TIMINGS.update({f"{assignment}: autograde {who}": seconds for who, seconds in run.seconds.items()})
    return run


# How the suite is cut into work units for the xdist workers (``--dist loadgroup``, see
# GroupScheduling): the tests of one unit run on one worker, in order, so a costly fixture is
# built once. pytest 9 ignores the node ids xdist's own xdist_group marks rewrite, hence this.
NOTEBOOK_PARAMETER = re.compile(r"\[(\d\d_[a-z_]+)")  # the notebook a test is parametrized with
# A notebook's reference run in-process (cached per worker) and its real nbgrader course.
PER_NOTEBOOK = {"tests/test_variants.py", "tests/test_rules.py", "tests/test_reference_run.py",
                "tests/test_autograde.py", "tests/grader/test_clean_rerun_rule.py"}
# An alternative graded through to the notebook's last test trains the notebook's model again;
# nothing else needs the outcome, so these are a unit of their own per notebook, on another worker.
ALTERNATIVE = re.compile(r"^tests/test_variants\.py::test_alternative_")
# One graded class per notebook.
CLASS_PER_NOTEBOOK = {"tests/grader/test_every_notebook.py"}
# One costly fixture for the whole module: a graded class, the built book, a JupyterLab server, the student kit;
# or the same accounts and cgroups, which two workers at once would set and clear under each other (test_limits).
SHARED_BY_MODULE = {"tests/grader/test_grader_hostile.py", "tests/grader/test_kernel_reach.py",
                    "tests/test_book.py", "tests/browser/test_classroom_hub.py",
                    "tests/test_student_kit.py", "tests/classroom/test_limits.py",
                    "tests/classroom/test_existing_hub.py",
                    "tests/grader/test_gradescope.py"}
# Modules whose notebooks need only a per-worker fixture (a JupyterLab server): cut in two units, the
# second from this notebook on, so that each half runs on a worker (and a server) of its own.
HALVES = {"tests/browser/test_student_flow.py": "05"}
# Modules that lay out the hub's test prefix (/srv/tfcourse-test) anew run one after the other, as one unit.
SAME_PREFIX = {"tests/classroom/test_exchange_attacks.py": "tests/browser/test_classroom_hub.py",
               "tests/browser/test_classroom_hub_ngshare.py": "tests/browser/test_classroom_hub.py",
               "tests/classroom/test_deadline_burst.py": "tests/browser/test_classroom_hub.py",
               "tests/test_hub_capacity.py": "tests/browser/test_classroom_hub.py"}
# The units that take minutes (worker seconds in a CI-like run, 4 workers on 2 cores, rounded; the graded classes,
# the student kit, Gradescope's and the README's from the 31-minute run of 2026-11-29, the kit's less the 44 s its
# install no longer spends compiling), handed out first and longest first, so that none of them starts near the end
# of the run; the rest follow by their number of tests.
COSTLY_UNITS = {
    "tests/browser/test_classroom_hub.py": 800,  # the hub's environment is built on a fresh machine (CI); the attacks
    "notebook:05_encoder_decoder": 700,
    "tests/browser/test_student_flow.py": 350,  # each half
    "notebook:07_language_model": 600,
    "tests/test_book.py": 450,  # both languages (built 2 notebooks at a time), and axe-core on every page
    "tests/test_edition_grading.py": 150,
    "notebook:04_encoder": 350,
    "tests/grader/test_every_notebook.py:07": 450,  # the waiting classes (SLEEPER): their wall seconds
    "notebook:06_ag_news_classifier": 300,
    "tests/browser/test_formgrader.py": 280,
    "tests/grader/test_every_notebook.py:04": 300,
    "tests/grader/test_every_notebook.py:03": 220,
    "tests/grader/test_every_notebook.py:06": 220,
    "tests/grader/test_every_notebook.py:02": 200,
    "tests/grader/test_every_notebook.py:05": 150,
    "tests/grader/test_grader_hostile.py": 270,
    "tests/grader/test_every_notebook.py": 140,
    "alternatives:05": 200,
    "tests/grader/test_grader_dask.py": 160,
    "tests/test_student_kit.py": 400,  # a real pip install into the kit's own .venv, then notebook 01 in its kernel
    # a department's hub: its environment and the course's packages installed on a fresh machine (530 s measured under
    # load 8), then one student's class through the hub (130 s)
    "tests/classroom/test_existing_hub.py": 530,
    "tests/grader/test_gradescope.py": 730,  # setup.sh (a real pip install into a new venv), then 01 graded 9 times
    "tests/grader/test_readme_commands.py": 130,  # one test; by its count it came last, the run's tail
    "notebook:": 120,
    "alternatives:": 60,
}


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its notebook's, its module's, or its own."""
    module = nodeid.split("::", 1)[0]
    module = SAME_PREFIX.get(module, module)
    notebook = NOTEBOOK_PARAMETER.search(nodeid)
    if ALTERNATIVE.match(nodeid) and notebook:
        return f"alternatives:{notebook[1]}"
    if module in PER_NOTEBOOK and notebook:
        return f"notebook:{notebook[1]}"
    if module in CLASS_PER_NOTEBOOK and notebook:
        return f"{module}:{notebook[1]}"
    if module in HALVES and notebook:
        return f"{module}:{'second' if notebook[1] >= HALVES[module] else 'first'} half"
    if module in SHARED_BY_MODULE:
        return module
    return nodeid


# Units whose minutes are mostly spent waiting: a graded class whose looping exercise waits out
# every cell limit (tests/grader/test_every_notebook.py). When all four workers held one at once,
# the two cores were half idle for minutes (docs/measurements.md); two workers at most take them.
SLEEPER = "tests/grader/test_every_notebook.py:"
SLEEPER_LANES = 2


def expected_seconds(unit: str, tests: int) -> float:
    """A unit's expected cost: its COSTLY_UNITS entry (the longest prefix that matches), else its test count."""
    prefixes = [prefix for prefix in COSTLY_UNITS if unit.startswith(prefix)]
    return COSTLY_UNITS[max(prefixes, key=len)] if prefixes else tests


class GroupScheduling(LoadScopeScheduling):
    """xdist's scope scheduling, with :func:`work_unit` as the scope, the costliest units handed out first.

    The waiting units (:data:`SLEEPER`) go to :data:`SLEEPER_LANES` workers, one after another, so that
    the other workers keep both cores busy; a worker takes the other kind only when its own kind is gone.
    """

    def __init__(self, config: pytest.Config, log=None) -> None:
        super().__init__(config, log)
        self.ordered = False
        self.lanes: set[str] = set()  # the workers (gateway ids) that take the waiting units

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)

    def _assign_work_unit(self, node) -> None:
        if not self.ordered:  # the first assignment: the work queue is complete, nothing handed out yet
            units = sorted(self.workqueue.items(), key=lambda item: -expected_seconds(item[0], len(item[1])))
            self.workqueue.clear()
            self.workqueue.update(units)
            self.ordered = True
        worker = node.gateway.id
        if worker not in self.lanes and len(self.lanes) < SLEEPER_LANES and any(map(is_sleeper, self.workqueue)):
            self.lanes.add(worker)
        wanted = next((unit for unit in self.workqueue if is_sleeper(unit) == (worker in self.lanes)), None)
        if wanted is not None:  # to the front of the queue, which the base class pops
            self.workqueue.move_to_end(wanted, last=False)
        super()._assign_work_unit(node)


def is_sleeper(unit: str) -> bool:
    return unit.startswith(SLEEPER)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log) -> LoadScopeScheduling | None:
    return GroupScheduling(config, log) if config.getoption("dist") == "loadgroup" else None


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once per run: the browser units on two workers write beside each other
        shutil.rmtree(BROWSER_ARTIFACTS, ignore_errors=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers
        shutil.rmtree(os.environ[SHARED_FOLDER_ENV], ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    grading_pool.shut_down()  # the kept grading pools, and the zygotes they hold
    # On an xdist worker: hand the timings to the controller, which prints them.
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["timings"] = json.dumps(TIMINGS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    TIMINGS.update(json.loads(getattr(node, "workeroutput", {}).get("timings", "{}")))


def pytest_terminal_summary(terminalreporter) -> None:
    if TIMINGS:
        terminalreporter.section("timings (seconds)")
        for what, seconds in sorted(TIMINGS.items()):
            terminalreporter.write_line(f"{what}: {seconds:.1f}")
