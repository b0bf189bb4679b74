"""Shared fixtures: fast mode for every kernel, the venv's programs on PATH, per-assignment caches."""

import os
import sys
from pathlib import Path

import pytest

os.environ["TFCOURSE_FAST"] = "1"  # inherited by every kernel the tests start
os.environ["MPLBACKEND"] = "Agg"
os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # keeps debugpy's frozen-modules note off stderr
# nbgrader runs `alembic` by name: put this interpreter's bin folder first.
os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"

import functools  # noqa: E402

from inprocess import InProcessNotebook  # noqa: E402
from nbgrader_course import GradedRun, grade_reference_submissions  # noqa: E402
from notebook_tools import answer_cells, read  # noqa: E402
from variants import VARIANTS, Variant  # noqa: E402

from autograder import course  # noqa: E402
from autograder.course import assignment_ids  # noqa: E402

ASSIGNMENTS = assignment_ids()
TIMINGS: dict[str, float] = {}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "variant" in metafunc.fixturenames:
        cases = [(a, v) for a in ASSIGNMENTS for v in VARIANTS.get(a, [])]
        metafunc.parametrize(("assignment", "variant"), cases, ids=[f"{a}:{v.id}" for a, v in cases])
    elif "assignment" in metafunc.fixturenames:
        metafunc.parametrize("assignment", ASSIGNMENTS, scope="session")


@functools.cache
def inprocess_notebook(assignment: str) -> InProcessNotebook:
    return InProcessNotebook(read(course.source_notebook(assignment)))


def variant_answer(assignment: str, variant: Variant) -> dict[str, str]:
    """The answer cell a variant replaces, with the variant's source."""
    reference = answer_cells(inprocess_notebook(assignment).notebook)[variant.cell].source
    return {variant.cell: variant.apply(reference)}


def combined_variants(assignment: str) -> dict[str, dict[str, str]]:
    """Two submissions touching every answer cell at once.

    ``mutants``: per answer cell, the mutant that fails the fewest test cells (the hardest
    one to catch); ``alternatives``: per answer cell, its first alternative.
    """
    harness = inprocess_notebook(assignment)
    mutants: dict[str, tuple[int, str]] = {}
    alternatives: dict[str, str] = {}
    for variant in VARIANTS.get(assignment, []):
        answer = variant_answer(assignment, variant)
        if variant.kind == "alternative":
            alternatives.setdefault(variant.cell, answer[variant.cell])
            continue
        failures = sum(not o.passed for o in harness.grade(answer).values())
        best = mutants.get(variant.cell)
        if best is None or failures < best[0]:
            mutants[variant.cell] = (failures, answer[variant.cell])
    return {"mutants": {c: src for c, (_, src) in mutants.items()}, "alternatives": alternatives}


@pytest.fixture(scope="session")
def source_nb(assignment: str):
    return read(course.source_notebook(assignment))


@pytest.fixture(scope="session")
def release_nb(assignment: str):
    return read(course.release_notebook(assignment))


@pytest.fixture
def inprocess(assignment: str) -> InProcessNotebook:
    return inprocess_notebook(assignment)


@pytest.fixture(scope="session")
def graded(assignment: str, tmp_path_factory: pytest.TempPathFactory) -> GradedRun:
    """One real nbgrader course per assignment, with the reference submissions autograded."""
    root = tmp_path_factory.mktemp(f"course-{assignment}")
    run = grade_reference_submissions(assignment, root, extra=combined_variants(assignment))
    TIMINGS.update({f"{assignment}: autograde {who}": seconds for who, seconds in run.seconds.items()})
    return run


def pytest_terminal_summary(terminalreporter) -> None:
    if TIMINGS:
        terminalreporter.section("timings (seconds)")
        for what, seconds in TIMINGS.items():
            terminalreporter.write_line(f"{what}: {seconds:.1f}")
