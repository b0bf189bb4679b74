"""The packages' floors: each imports only from the floors below it, and grading holds only grading's steps.

From the ground up: ``tfcourse`` (the students' helper package) imports nothing of the course's tools;
``autograder`` (grading, and beside it the similarity report) imports neither the editions, the reader
edition nor the hub; ``editions`` sits above it, then ``book`` and ``classroom`` side by side, then ``testbed``
(what tests and benchmarks share) and ``benchmarks``, which import no test. Grading itself (``autograder/pipeline/``)
has floors too: ``storage``, ``exchange``, ``job``, ``commands``. Read from the source's import statements, so an
import inside a function counts too.
"""

import ast
import sys
from pathlib import Path

import pytest

from autograder.course.settings import REPO_ROOT

PACKAGES = ["tfcourse", "autograder", "editions", "book", "classroom", "testbed", "benchmarks"]
# What each package may not import: everything on a floor above it. The book and the hub share a floor and import
# nothing of each other; the test bed (the answers' variants, generated classes, the hub's and JupyterLab's drivers)
# serves the benchmarks and the tests, and the benchmarks import no test.
FORBIDDEN = {
    "tfcourse": {"autograder", "editions", "book", "classroom", "testbed", "benchmarks", "tests"},
    "autograder": {"editions", "book", "classroom", "testbed", "benchmarks", "tests"},
    "editions": {"book", "classroom", "testbed", "benchmarks", "tests"},
    "book": {"classroom", "testbed", "benchmarks", "tests"},
    "classroom": {"book", "testbed", "benchmarks", "tests"},
    "testbed": {"benchmarks", "tests"},
    "benchmarks": {"tests"},
}


def imported_modules(path: Path) -> set[str]:
    """What ``path`` imports, by full name (``from a.b import c``: ``a.b.c``); relative imports are its package's."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def imported_packages(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports."""
    return {name.split(".")[0] for name in imported_modules(path)}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_nothing_from_a_floor_above_it(package):
    offending = {
        str(path.relative_to(REPO_ROOT)): sorted(imported_packages(path) & FORBIDDEN[package])
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
    }
    offending = {path: names for path, names in offending.items() if names}
    assert not offending, f"{package} imports from a floor above it: {offending}"


# Grading's own floors (autograder/pipeline/), from the ground up: what each may not import. The exchange's code runs
# in nbgrader's collect and release feedback, and its handins.py on every student's server: none of it grades.
PIPELINE_FORBIDDEN = {"storage": {"exchange", "job", "commands"}, "exchange": {"job", "commands"}, "job": {"commands"}}


@pytest.mark.parametrize("floor", sorted(PIPELINE_FORBIDDEN))
def test_a_floor_of_grading_imports_nothing_from_a_floor_above_it(floor):
    offending = {}
    for path in sorted((REPO_ROOT / "autograder" / "pipeline" / floor).rglob("*.py")):
        floors = {name.split(".")[2] for name in imported_modules(path) if name.startswith("autograder.pipeline.")}
        if floors & PIPELINE_FORBIDDEN[floor]:
            offending[path.name] = sorted(floors & PIPELINE_FORBIDDEN[floor])
    assert not offending, f"pipeline/{floor} imports from a floor above it: {offending}"


def test_what_a_student_s_server_runs_of_the_grader_imports_only_the_standard_library():
    handins = REPO_ROOT / "autograder" / "pipeline" / "exchange" / "handins.py"
    foreign = sorted(imported_packages(handins) - set(sys.stdlib_module_names))
    assert not foreign, f"handins.py (in the hub's runtime: classroom/provision.py, RUNTIME_PARTS) imports {foreign}"


# What grading's steps may take from the similarity report: export reads its closest matches, nothing runs it.
PIPELINE_MAY_IMPORT = {("autograder.similarity.compare", name) for name in ("closest_matches", "reference_closeness")}


def similarity_imports(path: Path) -> set[tuple[str, str]]:
    """``(module, name)`` of every import of ``path`` from the similarity report."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("autograder.similarity"):
            found.update((node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update((a.name, "") for a in node.names if a.name.startswith("autograder.similarity"))
    return found


def test_the_similarity_report_sits_beside_the_grading_pipeline_not_in_it():
    assert (REPO_ROOT / "autograder" / "similarity" / "compare.py").is_file()
    pipeline = REPO_ROOT / "autograder" / "pipeline"
    assert not (pipeline / "similarity").exists(), "the similarity report is an instructor's tool, not a grading step"
    imported = {path.name: similarity_imports(path) - PIPELINE_MAY_IMPORT for path in sorted(pipeline.rglob("*.py"))}
    assert not any(imported.values()), f"grading's steps do not run the similarity report: {imported}"


def test_the_similarity_check_sees_a_step_that_runs_the_report(tmp_path):
    module = tmp_path / "step.py"
    module.write_text("from autograder.similarity.canonical import canonical\nimport autograder.similarity.page\n")
    expected = {("autograder.similarity.canonical", "canonical"), ("autograder.similarity.page", "")}
    assert similarity_imports(module) == expected


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    module = tmp_path / "module.py"
    module.write_text("def feedback():\n    from editions.release import translate\n    import book.build\n")
    assert imported_packages(module) == {"editions", "book"}
    assert imported_modules(module) == {"editions.release.translate", "book.build"}
