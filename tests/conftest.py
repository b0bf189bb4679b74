"""Shared fixtures: fast mode for every kernel, the venv's programs on PATH, per-assignment caches.

The suite runs on pytest-xdist workers (``make test``). Tests that share an expensive fixture
(a graded course, the built book, a JupyterLab server) are sent to one worker as one unit of
work (``--dist loadgroup``, :func:`work_unit`), so each fixture is still built once per run; the
timings the workers record come back to the summary at the end.
"""

import json
import os
import re
import sys
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

os.environ["TFCOURSE_FAST"] = "1"  # inherited by every kernel the tests start
os.environ["MPLBACKEND"] = "Agg"
os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # keeps debugpy's frozen-modules note off stderr
# nbgrader runs `alembic` by name: put this interpreter's bin folder first.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

from autograder.course import settings  # noqa: E402
from autograder.course.course import Course  # noqa: E402
from autograder.course.settings import assignment_ids  # noqa: E402
from tests.support.course import ThrowawayCourse  # noqa: E402
from tests.support.harness import combined_variants, inprocess_notebook  # noqa: E402
from tests.support.inprocess import InProcessNotebook  # noqa: E402
from tests.support.nbgrader_course import GradedRun, grade_reference_submissions  # noqa: E402
from tests.support.notebooks import read  # noqa: E402
from tests.variants import VARIANTS  # noqa: E402

ASSIGNMENTS = assignment_ids()
TIMINGS: dict[str, float] = {}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "variant" in metafunc.fixturenames:
        cases = [(a, v) for a in ASSIGNMENTS for v in VARIANTS.get(a, [])]
        metafunc.parametrize(("assignment", "variant"), cases, ids=[f"{a}:{v.id}" for a, v in cases])
    elif "assignment" in metafunc.fixturenames:
        metafunc.parametrize("assignment", ASSIGNMENTS, scope="session")


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
    builds a course works in one of these, never in the repository."""

    def make(*assignments: str, name: str = "course", release: bool = True) -> Course:
        return Course.default().copy_to(tmp_path_factory.mktemp(name), assignments, release)

    return make


@pytest.fixture(scope="session")
def graded(assignment: str, throwaway_course: ThrowawayCourse) -> GradedRun:
    """One real nbgrader course per assignment, with the reference submissions autograded."""
    course = throwaway_course(assignment, name=f"course-{assignment}", release=False)
    run = grade_reference_submissions(assignment, course, extra=combined_variants(assignment))
    TIMINGS.update({f"{assignment}: autograde {who}": seconds for who, seconds in run.seconds.items()})
    return run


# How the suite is cut into work units for the xdist workers (``--dist loadgroup``, see
# GroupScheduling): the tests of one unit run on one worker, in order, so a costly fixture is
# built once. pytest 9 ignores the node ids xdist's own xdist_group marks rewrite, hence this.
NOTEBOOK_PARAMETER = re.compile(r"\[(\d\d_[a-z_]+)")  # the notebook a test is parametrized with
# A notebook's reference run in-process (cached per worker) and its real nbgrader course.
PER_NOTEBOOK = {"tests/test_variants.py", "tests/test_reference_run.py", "tests/test_autograde.py"}
# One graded class per notebook.
CLASS_PER_NOTEBOOK = {"tests/grader/test_every_notebook.py"}
# One costly fixture for the whole module: a graded class, the built book, a JupyterLab server.
SHARED_BY_MODULE = {"tests/grader/test_grader_hostile.py", "tests/grader/test_kernel_reach.py",
                    "tests/test_book.py", "tests/browser/test_student_flow.py"}  # fmt: skip


def work_unit(nodeid: str) -> str:
    """The unit of work a test belongs to: its notebook's, its module's, or its own."""
    module = nodeid.split("::", 1)[0]
    notebook = NOTEBOOK_PARAMETER.search(nodeid)
    if module in PER_NOTEBOOK and notebook:
        return f"notebook:{notebook[1]}"
    if module in CLASS_PER_NOTEBOOK and notebook:
        return f"{module}:{notebook[1]}"
    if module in SHARED_BY_MODULE:
        return module
    return nodeid


class GroupScheduling(LoadScopeScheduling):
    """xdist's scope scheduling, with :func:`work_unit` as the scope."""

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(nodeid)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log) -> LoadScopeScheduling | None:
    return GroupScheduling(config, log) if config.getoption("dist") == "loadgroup" else None


def pytest_sessionfinish(session: pytest.Session) -> None:
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
