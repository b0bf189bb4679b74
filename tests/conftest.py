"""Shared fixtures: fast mode for every kernel, the venv's programs on PATH, per-assignment caches.

The suite runs on pytest-xdist workers (``make test``). Tests that share an expensive fixture
(a graded course, the built book, a JupyterLab server) are sent to one worker as a group
(``--dist loadgroup``), so each fixture is still built once per run; the timings the workers
record come back to the summary at the end.
"""

import json
import os
import sys
from pathlib import Path

import pytest

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


# Fixtures whose value is costly and shared: every test that uses one runs on the same worker.
SHARED_FIXTURES = ("graded_class", "graded", "book", "lab")
# Fixtures that run one notebook's reference (in-process or in nbgrader): grouped by notebook,
# the tests of a notebook share the cached run.
PER_NOTEBOOK_FIXTURES = {"inprocess", "variant", "graded"}


def xdist_group(item: pytest.Item) -> str | None:
    """The worker group of a test: its notebook's, or the shared fixture's it uses, or none."""
    fixtures = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "assignment" in params and fixtures & PER_NOTEBOOK_FIXTURES:
        return f"notebook:{params['assignment']}"
    for name in SHARED_FIXTURES:
        if name in fixtures:
            each = params.get(name)  # a fixture parametrized by itself, e.g. one graded class per notebook
            return f"{item.module.__name__}:{name}" + (f":{each}" if each else "")
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = xdist_group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


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
