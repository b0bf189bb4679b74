"""Formgrader on the merged gradebook, in a real browser: manual scores survive a re-grade and reach the export.

A course folder laid out like the repository holds notebook 01; student ``ann`` hands it in
filled with the reference answers, and ``python -m autograder --root COURSE grade`` grades it
into ``grading/gradebook.db`` (while JupyterLab starts on the course as ``make instructor-lab``
starts it, and headless Chromium loads it). The instructor opens *Nbgrader → Formgrader →
Manual Grading*, gives the written answer ``written_sqrt_dk`` 1.5 of its 2 points and overrides
the kernel's 2 of 2 on the test cell ``sdpa_values`` with 1. ``grade --force`` then grades the
unchanged submission again. Both scores must still be in the gradebook, on the same submission,
and in formgrader's page, and ``export`` must carry them: 16 autograded points - 2 + 1 + 1.5 =
16.5 in total, where a re-grade that wiped them would give 16.0 and no ``written_sqrt_dk`` column.
The submission's maths must be drawn by the MathJax 2 the instructor's server serves itself
(jupyter-server-mathjax, no CDN): every formula typeset, none left as ``$...$``, no page error
and no request beyond the server.
Screenshots and the server's log land in ``build/browser-artifacts/formgrader/``.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
import pandas as pd
import psutil
import pytest
from nbgrader.api import Gradebook

from autograder.course.course import Course
from autograder.course.notebooks import fill_answers, is_graded_test_cell, nbgrader_meta, reference_answers
from autograder.course.paths import sqlite_url
from autograder.course.settings import REPO_ROOT
from testbed.lab import NBGRADER_CONFIG, JupyterLab, end_processes, start_instructor_lab
from tests.browser.formgrader_page import FormgraderPage
from tests.conftest import TIMINGS
from tests.support.course import ThrowawayCourse

pytestmark = pytest.mark.slow

ASSIGNMENT = "01_attention"
STUDENT = "ann"
WRITTEN, WRITTEN_SCORE = "written_sqrt_dk", 1.5  # a written answer, graded by hand only
OVERRIDDEN, OVERRIDE_SCORE = "sdpa_values", 1.0  # an autograded test cell worth 2, passed by the reference
MIN_FORMULAS = 40  # notebook 01's Markdown holds 49 formulas ($...$ and $$...$$)
GRADE = ("grade", "--jobs", "1")  # one submission: one job (a second would only warm up more processes)


@dataclass(frozen=True)
class GradeRow:
    """One cell's grade in the gradebook."""

    auto_score: float | None
    manual_score: float | None
    needs_manual_grade: bool


@dataclass
class AutograderRun:
    """``python -m autograder --root COURSE ARGS`` running in the background; its stdout and stderr in ``log``."""

    args: tuple[str, ...]
    process: subprocess.Popen
    log: Path
    started: float

    def wait(self, timeout: float = 600.0) -> str:
        """Its output once it has ended; fails the test, with the output, if it exited with an error."""
        returncode = self.process.wait(timeout=timeout)
        TIMINGS[f"formgrader: {self.log.stem}"] = time.perf_counter() - self.started
        output = self.log.read_text(errors="replace")
        if returncode != 0:
            command = " ".join(self.args)
            pytest.fail(f"`python -m autograder {command}` exited with {returncode}:\n{output[-6000:]}", pytrace=False)
        return output

    def stop(self) -> None:
        """End it and what it started (workers, kernels), by id, if it still runs."""
        if self.process.poll() is None:
            try:
                children = [child.pid for child in psutil.Process(self.process.pid).children(recursive=True)]
            except psutil.NoSuchProcess:
                children = []
            end_processes([self.process.pid, *children])
        self.process.wait(timeout=30)


def start_autograder(course: Course, log: Path, *args: str) -> AutograderRun:
    """Start the command from the repository root, as the README runs it, in an instructor's environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "TFCOURSE_FAST")}  # set by tests/conftest
    command = [sys.executable, "-m", "autograder", "--root", str(course.root), *args]
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    return AutograderRun(args, process, log, time.perf_counter())


def autograder(course: Course, log: Path, *args: str) -> str:
    run = start_autograder(course, log, *args)
    try:
        return run.wait()
    finally:
        run.stop()


def filled_with_reference_answers(course: Course) -> nbformat.NotebookNode:
    """The release notebook with every cell a student writes as the source holds it."""
    source = nbformat.read(course.source_notebook(ASSIGNMENT), as_version=4)
    return fill_answers(nbformat.read(course.release_notebook(ASSIGNMENT), as_version=4), reference_answers(source))


def autograded_points(course: Course) -> float:
    source = nbformat.read(course.source_notebook(ASSIGNMENT), as_version=4)
    return sum(nbgrader_meta(cell)["points"] for cell in source.cells if is_graded_test_cell(cell))


def assert_graded_once(output: str) -> None:
    assert re.search(rf"^{ASSIGNMENT}\s+{STUDENT}\s+graded\b", output, re.M), f"ann was not graded:\n{output}"
    assert "1 graded in this run" in output, f"the submission was not (re-)graded:\n{output}"


def gradebook_grades(course: Course) -> tuple[str, dict[str, GradeRow]]:
    """The id of ann's submitted notebook (formgrader's submission id), and ``{grade id: GradeRow}``."""
    with Gradebook(sqlite_url(course.grading.gradebook)) as gb:
        notebook = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, STUDENT)
        rows = {g.name: GradeRow(g.auto_score, g.manual_score, bool(g.needs_manual_grade)) for g in notebook.grades}
        return notebook.id, rows


@pytest.fixture
def course(throwaway_course: ThrowawayCourse) -> Course:
    """Notebook 01 laid out like the repository, the course's nbgrader settings, ann's hand-in."""
    course = throwaway_course(ASSIGNMENT, seeded=True)
    (course.root / "nbgrader_config.py").write_text(NBGRADER_CONFIG)
    handed_in = course.grading.submitted(STUDENT, ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    handed_in.parent.mkdir(parents=True)
    nbformat.write(filled_with_reference_answers(course), handed_in)
    return course


@pytest.fixture
def first_grade(course: Course, tmp_path: Path) -> Iterator[AutograderRun]:
    """``grade``, started before the instructor's server and browser, which start while it runs."""
    run = start_autograder(course, tmp_path / "grade.log", *GRADE)
    try:
        yield run
    finally:
        run.stop()


@pytest.fixture
def instructor_lab(course: Course, chromium: str, artifacts: Path) -> Iterator[JupyterLab]:
    server = start_instructor_lab(course.root)
    try:
        yield server
    finally:
        server.stop()
        (artifacts / "formgrader").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(server.log, artifacts / "formgrader" / "jupyterlab.log")


def test_manual_scores_in_formgrader_survive_a_regrade_and_reach_the_export(
    course: Course, first_grade: AutograderRun, instructor_lab: JupyterLab, bare_page, artifacts: Path, tmp_path: Path
) -> None:
    formgrader = FormgraderPage(bare_page, instructor_lab, artifacts / "formgrader")
    formgrader.open_lab()
    assert_graded_once(first_grade.wait())
    submission_id, graded = gradebook_grades(course)
    assert graded[WRITTEN] == GradeRow(None, None, True), "the written answer should wait for a manual grade"
    assert graded[OVERRIDDEN] == GradeRow(2.0, None, False)

    formgrader.open_formgrader()
    formgrader.screenshot("1-formgrader.png")
    # A broken nbgrader_config.py only shows as empty tables in the page; the server's log says why.
    assert "Exception while loading config file" not in instructor_lab.log.read_text(), instructor_lab.log_tail()
    assert formgrader.open_submission(ASSIGNMENT, ASSIGNMENT, STUDENT) == submission_id
    maths = formgrader.maths()  # MathJax 2 from jupyter-server-mathjax, served by the instructor's server
    formgrader.screenshot("1b-maths.png", WRITTEN)
    (artifacts / "formgrader" / "maths.json").write_text(json.dumps(asdict(maths), indent=1))
    assert maths.formulas >= MIN_FORMULAS and maths.drawn == maths.formulas, maths
    assert maths.errors == 0 and maths.raw == [], f"maths left as TeX or drawn with errors: {maths}"
    assert formgrader.shown_score(WRITTEN) == "" and formgrader.shown_score(OVERRIDDEN) == ""
    assert formgrader.enter_score(WRITTEN, WRITTEN_SCORE)["manual_score"] == WRITTEN_SCORE
    formgrader.screenshot("2-written-answer-graded.png", WRITTEN)
    assert formgrader.enter_score(OVERRIDDEN, OVERRIDE_SCORE)["manual_score"] == OVERRIDE_SCORE
    formgrader.screenshot("3-test-cell-overridden.png", OVERRIDDEN)
    _, saved = gradebook_grades(course)
    assert saved[WRITTEN] == GradeRow(None, WRITTEN_SCORE, False), "formgrader did not save the written answer"
    assert saved[OVERRIDDEN] == GradeRow(2.0, OVERRIDE_SCORE, False), "formgrader did not save the override"

    assert_graded_once(autograder(course, tmp_path / "regrade.log", *GRADE, "--force"))
    same_id, regraded = gradebook_grades(course)
    assert same_id == submission_id, "the re-grade replaced the submission formgrader graded"
    assert regraded[WRITTEN] == saved[WRITTEN], "the re-grade changed the written answer's manual score"
    assert regraded[OVERRIDDEN] == saved[OVERRIDDEN], "the re-grade changed the override"
    other_written = [row for name, row in regraded.items() if name.startswith("written_") and name != WRITTEN]
    assert other_written and all(row.needs_manual_grade for row in other_written), "still to be graded by hand"

    formgrader.reload()
    formgrader.screenshot("4-after-regrade.png", WRITTEN)
    assert float(formgrader.shown_score(WRITTEN)) == WRITTEN_SCORE
    assert float(formgrader.shown_score(OVERRIDDEN)) == OVERRIDE_SCORE
    assert not formgrader.errors, f"JavaScript errors in JupyterLab or the formgrader: {formgrader.errors}"
    assert not formgrader.outside, f"the page reached beyond the instructor's server: {formgrader.outside}"

    csv = tmp_path / "grades.csv"
    autograder(course, tmp_path / "export.log", "export", "--output", str(csv))
    row = pd.read_csv(csv).set_index("student").loc[STUDENT]
    assert row[f"{ASSIGNMENT}:{WRITTEN}"] == WRITTEN_SCORE
    assert row[f"{ASSIGNMENT}:{OVERRIDDEN}"] == OVERRIDE_SCORE  # the override replaces the kernel's 2 points
    expected = autograded_points(course) - 2.0 + OVERRIDE_SCORE + WRITTEN_SCORE
    assert row[f"{ASSIGNMENT} total"] == expected and row["total"] == expected, row.to_dict()
