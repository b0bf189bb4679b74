"""Gradescope's autograder zip (``python -m autograder gradescope``), end to end in a simulated ``/autograder``.

Every notebook's zip is built and its layout checked. For 01 and 07 the zip is unpacked as Gradescope does
(``source/``, ``run_autograder`` beside it), its own ``setup.sh`` runs once (a real pip install into a new venv;
07's tree starts from a hard-linked copy of that venv, and its setup.sh's pip install finds everything in place),
then ``run_autograder`` grades honest and hostile submissions. Each results.json is checked against the JSON
Schema of Gradescope's documented format (``gradescope_results.schema.json``).
"""

import hashlib
import json
import os
import shutil
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import nbformat
import pytest
from nbformat import NotebookNode

from autograder.course.course import Course
from autograder.course.notebooks import fill_answers, grade_id, nbgrader_meta, reference_answers
from autograder.gradescope import PLAN_FILE, ROOT_VARIABLE, TORCH_INDEX_VARIABLE
from autograder.gradescope.build import autograded_points, build, zip_name
from autograder.gradescope.run import pick_notebook, run
from autograder.launch.limits import Limits
from autograder.launch.sandbox import bwrap_available
from testbed.variants import VARIANTS
from tests.conftest import TIMINGS
from tests.grader.hostile_class import prints_hidden, reads_hidden, with_cell_after
from tests.grader.leaks import normalised, secret_lines

SCHEMA = json.loads(Path(__file__).with_name("gradescope_results.schema.json").read_text())
COURSE = Course.default()
# Graded through its zip in a simulated /autograder: 01 (07's too when this was written: 2.04x to 2.29x plain
# nbgrader's time, docs/measurements.md; left out of the suite for its 4 to 5 minutes of setup.sh and grading).
FULLY_TESTED = ("01_attention",)
# 01's zip: a wall-clock limit short enough for the never-returning submission to time out within the test.
WALL_01 = 60.0
SETUP_DEADLINE = 1200  # a pip install into a new venv: minutes on a busy 2-core machine (the student kit's too)
RUN_DEADLINE = 240
BY_HAND = "(graded by hand)"


def digest(folder: Path, skipped: tuple[str, ...] = ("grading", ".venv")) -> str:
    """SHA-256 over the names and bytes of the files under ``folder``, but its ``skipped`` top-level folders."""
    total = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder)
        if path.is_file() and name.parts[0] not in skipped:
            total.update(str(name).encode() + path.read_bytes())
    return total.hexdigest()


@dataclass
class Tree:
    """A simulated ``/autograder``: the zip unpacked in ``source/``, run_autograder copied beside it."""

    root: Path

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def course(self) -> Course:
        return Course(self.source)

    def environment(self) -> dict[str, str]:
        return {**os.environ, ROOT_VARIABLE: str(self.root), TORCH_INDEX_VARIABLE: ""}

    def setup(self) -> float:
        start = time.monotonic()
        subprocess.run(["bash", "setup.sh"], cwd=self.source, env=self.environment(), timeout=SETUP_DEADLINE,
                       check=True, stdout=subprocess.DEVNULL)
        return time.monotonic() - start

    def run(self, files: dict[str, NotebookNode | str]) -> tuple[dict, float]:
        """results.json (valid by the schema) for a submission of ``files``, and run_autograder's seconds."""
        for folder in ("submission", "results"):
            shutil.rmtree(self.root / folder, ignore_errors=True)
            (self.root / folder).mkdir()
        for name, content in files.items():
            if isinstance(content, str):
                (self.root / "submission" / name).write_text(content)
            else:
                nbformat.write(content, self.root / "submission" / name)
        start = time.monotonic()
        with (self.root / "results" / "stdout").open("w") as stdout:
            subprocess.run([self.root / "run_autograder"], cwd=self.root, env=self.environment(), timeout=RUN_DEADLINE,
                           check=True, stdout=stdout, stderr=subprocess.STDOUT)
        seconds = time.monotonic() - start
        results = json.loads((self.root / "results" / "results.json").read_text())
        jsonschema.validate(results, SCHEMA)
        status = results.get("extra_data", {}).get("status")
        print(f"results.json for {sorted(files)}: {status}, {results['score']:g} of {full_marks(results):g} "
              f"({results.get('visibility', 'visible')}), {seconds:.0f} s")  # shown by pytest -rP or -s
        return results, seconds


def unpack(archive: Path, root: Path) -> Tree:
    """What Gradescope does with the zip: its files in ``source/``, ``run_autograder`` copied to the root."""
    tree = Tree(root)
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(tree.source)
        for entry in opened.infolist():  # extractall drops the permission bits
            (tree.source / entry.filename).chmod((entry.external_attr >> 16) & 0o777 or 0o644)
    shutil.copy2(tree.source / "run_autograder", root / "run_autograder")
    return tree


def reference(assignment: str, answers: dict[str, str] | None = None) -> NotebookNode:
    """The release notebook filled with the reference answers (``answers`` replacing some)."""
    release = nbformat.read(COURSE.release_notebook(assignment), as_version=4)
    filled = reference_answers(nbformat.read(COURSE.source_notebook(assignment), as_version=4))
    return fill_answers(release, {**filled, **(answers or {})})


def mutant(assignment: str) -> NotebookNode:
    variant = next(v for v in VARIANTS[assignment] if v.kind == "mutant")
    answers = reference_answers(nbformat.read(COURSE.source_notebook(assignment), as_version=4))
    return reference(assignment, {variant.cell: variant.apply(answers[variant.cell])})


def blank(assignment: str) -> NotebookNode:
    return nbformat.read(COURSE.release_notebook(assignment), as_version=4)


def graded(results: dict) -> list[dict]:
    return [test for test in results["tests"] if not test["name"].endswith(BY_HAND)]


def full_marks(results: dict) -> float:
    return sum(test["max_score"] for test in results["tests"])


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Tree]:
    """The fully tested notebooks' trees, each set up by its zip's own setup.sh (one pip install, shared)."""
    built = tmp_path_factory.mktemp("gradescope-zips")
    trees = {}
    for assignment in FULLY_TESTED:
        limits = Limits(wall_seconds=WALL_01) if assignment == "01_attention" else Limits()
        trees[assignment] = unpack(build(COURSE, assignment, built, limits), tmp_path_factory.mktemp(assignment))
    first, *others = (trees[a] for a in FULLY_TESTED)
    TIMINGS["gradescope: setup.sh, new venv (01)"] = first.setup()
    for other in others:  # the same packages: hard links of the first venv, then the zip's own setup.sh
        subprocess.run(["cp", "-al", first.source / ".venv", other.source / ".venv"], check=True, timeout=300)
        TIMINGS[f"gradescope: setup.sh, venv in place ({other.course.assignments()[0]})"] = other.setup()
    return trees


@pytest.mark.parametrize("notebook", COURSE.assignments())
def test_every_notebook_builds_a_zip_in_gradescopes_layout(notebook: str, tmp_path: Path) -> None:
    path = build(COURSE, notebook, tmp_path, Limits())
    assert path == tmp_path / zip_name(notebook)
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        modes = {entry.filename: (entry.external_attr >> 16) & 0o777 for entry in archive.infolist()}
        plan = json.loads(archive.read(PLAN_FILE))
    assert {"setup.sh", "run_autograder"} <= names, "Gradescope needs both at the zip's root"
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert {f"{part}/{notebook}/{notebook}.ipynb" for part in ("solutions", "notebooks")} <= names
    others = {name.split("/")[1] for name in names if name.startswith(("solutions/", "notebooks/"))} - {notebook}
    assert not others, f"other notebooks in {notebook}'s zip: {others}"
    assert not [name for name in names if "__pycache__" in name or name.startswith(("grading/", "build/", ".venv"))]
    assert plan["assignment"] == notebook
    assert path.stat().st_size < 5 * 2**20, f"{path.stat().st_size:,} bytes"


@pytest.mark.parametrize(
    ("files", "taken"),
    [
        (["01_attention.ipynb", "01_attention (3).ipynb", "notes.ipynb"], "01_attention.ipynb"),
        (["01_attention (3).ipynb", "01_attention (1).ipynb"], "01_attention (3).ipynb"),
        (["homework.ipynb", "README.md"], "homework.ipynb"),
        (["work/homework.ipynb", ".ipynb_checkpoints/homework-checkpoint.ipynb"], "work/homework.ipynb"),
        (["a.ipynb", "b.ipynb"], None),
        ([], None),
    ],
)
def test_the_notebook_graded_is_the_assignments_own_or_the_only_one(
    files: list[str], taken: str | None, tmp_path: Path
) -> None:
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    (tmp_path / "linked.ipynb").symlink_to("/etc/passwd")  # a link is never taken
    picked, notes = pick_notebook(tmp_path, "01_attention")
    assert (str(picked.relative_to(tmp_path)) if picked else None) == taken, notes
    if taken is None:
        assert notes[0].startswith("No 01_attention.ipynb to grade")


def test_a_grader_failure_still_writes_a_valid_result(tmp_path: Path) -> None:
    (tmp_path / "submission").mkdir()
    run(tmp_path, Course(tmp_path / "source"))  # no zip unpacked there: the grader cannot start
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    assert results["score"] == 0 and "autograder failed" in results["output"]


@pytest.mark.slow
@pytest.mark.timeout(SETUP_DEADLINE + 6 * RUN_DEADLINE)
@pytest.mark.parametrize("notebook", FULLY_TESTED)
def test_reference_blank_and_mutant(trees: dict[str, Tree], notebook: str) -> None:
    tree = trees[notebook]
    good, seconds = tree.run({f"{notebook} (3).ipynb": reference(notebook)})
    TIMINGS[f"gradescope: run_autograder {notebook}, reference answers"] = seconds
    assert good["extra_data"]["status"] == "graded", good["output"]
    assert all(test["score"] == test["extra_data"]["points"] for test in graded(good)), graded(good)
    assert good["score"] >= full_marks(good) == autograded_points(COURSE, notebook) > 0
    assert f"Graded '{notebook} (3).ipynb' as {notebook}.ipynb" in good["output"]
    for test in graded(good):  # the optional exercises' points sit outside the maximum
        assert test["max_score"] == (0 if test["extra_data"]["extra_credit"] else test["extra_data"]["points"])
    source = nbformat.read(tree.course.source_notebook(notebook), as_version=4)
    written = [grade_id(c) for c in source.cells if nbgrader_meta(c).get("grade") and c.cell_type == "markdown"]
    by_hand = [test for test in good["tests"] if test["name"].endswith(BY_HAND)]
    assert len(by_hand) == len(written) and all(t["score"] == t["max_score"] == 0 for t in by_hand)

    empty, seconds = tree.run({"homework.ipynb": blank(notebook)})  # a lone notebook under another name
    TIMINGS[f"gradescope: run_autograder {notebook}, blank"] = seconds
    assert empty["score"] == 0 and all(test["score"] == 0 for test in empty["tests"]), empty
    assert empty["extra_data"]["status"] == "graded"

    wrong, _ = tree.run({f"{notebook}.ipynb": mutant(notebook), "notes.ipynb": blank(notebook)})
    assert 0 < wrong["score"] < good["score"], wrong
    assert "notes.ipynb" in wrong["output"], "the notebook not graded is named"


@pytest.mark.slow
def test_missing_and_unreadable_notebooks_get_a_clear_result(trees: dict[str, Tree]) -> None:
    tree = trees["01_attention"]
    missing, _ = tree.run({"a.ipynb": blank("01_attention"), "b.ipynb": blank("01_attention")})
    assert missing["score"] == 0 and missing["extra_data"]["status"] == "missing", missing
    assert "No 01_attention.ipynb to grade" in missing["output"] and "'a.ipynb'" in missing["output"]
    broken, _ = tree.run({"01_attention.ipynb": '{"cells": [ not JSON'})
    assert broken["score"] == 0 and broken["extra_data"]["status"] == "unreadable", broken
    assert "unreadable" in broken["output"]


def never_returns(course: Course) -> NotebookNode:
    """Right answers, then a cell that ignores the interrupt and loops for ever."""
    loop = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass\n"
    return with_cell_after(reference("01_attention"), "padding_mask", loop)


def writes_results(tree: Tree) -> NotebookNode:
    """Right answers, then a cell that writes its own results.json and overwrites the grader's files."""
    grader = tree.source / "autograder" / "gradescope" / "results_json.py"
    targets = [tree.root / "results" / "results.json", tree.course.source_notebook("01_attention"), grader,
               tree.source / "run_autograder", tree.root / "run_autograder"]
    vandal = f"""
import json
for target in {[str(t) for t in targets]!r}:
    try:
        with open(target, "w") as handle:
            json.dump({{"score": 1000.0, "tests": []}}, handle)
        print("wrote", target)
    except OSError as error:
        print("could not write", target, error)
"""
    return with_cell_after(reference("01_attention"), "padding_mask", vandal)


HOSTILE = {
    "reads_hidden": lambda tree: reads_hidden(tree.course),
    "writes_results": writes_results,
    "prints_hidden": lambda tree: prints_hidden(tree.course),
    "never_returns": lambda tree: never_returns(tree.course),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_submission_changes_nothing_and_sees_nothing(trees: dict[str, Tree], case: str) -> None:
    if not bwrap_available():
        pytest.fail("needs bubblewrap (make sandbox): without it student code could read the hidden tests")
    tree = trees["01_attention"]
    before = digest(tree.source), (tree.root / "run_autograder").read_bytes()
    results, seconds = tree.run({"01_attention.ipynb": HOSTILE[case](tree)})
    TIMINGS[f"gradescope: run_autograder 01, {case}"] = seconds
    assert (digest(tree.source), (tree.root / "run_autograder").read_bytes()) == before, f"{case} changed files"
    shown = "\n".join([results["output"], *(test["output"] for test in results["tests"])])
    leaked = {line for line in normalised(shown)} & secret_lines(tree.course)
    assert not leaked, f"{case}: results.json shows hidden-test lines {leaked}"
    full = full_marks(results)
    if case == "reads_hidden":  # the solutions were out of its sight: the answer it built from them fails
        assert 0 < results["score"] < full and all(t["score"] == 0 for t in graded(results) if "sdpa" in t["name"])
    if case == "writes_results":  # the grader's results.json, not the submission's
        assert results["score"] <= full and results["extra_data"]["status"] == "flagged", results
        assert results["visibility"] == "after_published", "a flagged submission waits for the instructor"
    if case == "never_returns":
        assert results["extra_data"]["status"] == "timed out", results["output"]
        assert "timed out" in results["output"]  # within RUN_DEADLINE: run_autograder's own wall-clock limit held
