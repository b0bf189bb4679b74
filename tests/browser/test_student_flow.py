"""The student flow of every release notebook, in JupyterLab in headless Chromium.

Untouched release: Run All stops with the NotImplementedError of the first TODO (in its
answer cell or in the first cell that calls it), no cell before the TODO failed, and, in the
first notebook, nbgrader's Validate button reports the failure. Filled with the reference
answers (as a student would type them): every cell runs, every figure the notebook makes
shows as a loaded ``<img>`` in its output area, and, in the last notebook, Validate reports
success. Screenshots land in ``build/browser-artifacts/<assignment>/``.

Validate runs the whole notebook again, through the same server extension for every notebook;
what it would say of each notebook is tested without the browser: under nbgrader itself, the
reference answers score full marks and every untouched release 0 (``tests/test_autograde.py``).
"""

import time

import nbformat
import pytest

from autograder.course import settings
from autograder.course.notebooks import fill_answers, is_answer_cell, reference_answers
from testbed.notebooks import read
from tests.browser.notebook_page import NotebookPage
from tests.conftest import TIMINGS
from tests.support.harness import reference_figures

pytestmark = pytest.mark.slow

RUN_TIMEOUT = 600.0  # seconds for Run All, and for Validate, of one notebook in fast mode
VALIDATION_SUCCESS = "Success! Your notebook passes all the tests."
UNTOUCHED_VALIDATED = "01_attention"  # the notebook whose untouched release is also validated in the browser
FILLED_VALIDATED = "07_language_model"  # and the one whose filled copy is


def figures_per_code_cell(assignment: str) -> list[int]:
    """How many figures each code cell of the notebook makes (the in-process run of the source)."""
    return reference_figures(assignment)


def test_untouched_release_stops_at_the_first_todo(assignment, page, lab, artifacts):
    """And, in UNTOUCHED_VALIDATED, Validate reports the failure."""
    release = read(settings.release_notebook(assignment))
    first_todo = next(i for i, cell in enumerate(release.cells) if is_answer_cell(cell))
    notebook = NotebookPage(page, lab, f"{assignment}/{assignment}.ipynb", artifacts / assignment)
    notebook.open()

    ok, seconds = notebook.run_all(RUN_TIMEOUT)
    TIMINGS[f"{assignment}: browser, untouched, run all"] = seconds
    cells = notebook.cells()
    assert len(cells) == len(release.cells), "JupyterLab shows a different number of cells than the file holds"
    failed = [c for c in cells if c.failed]
    assert failed, "Run All ran through an untouched notebook without an error"
    stop = failed[0]
    notebook.screenshot_cell(stop.index, "1-untouched-run-all-stops.png")
    assert stop.index >= first_todo, (
        f"cell {stop.index} failed before the first TODO (cell {first_todo}): {stop.output_text[-500:]!r}"
    )
    assert "NotImplementedError" in stop.output_text, (
        f"Run All should stop at the first TODO's NotImplementedError; cell {stop.index} shows "
        f"{stop.output_text[-500:]!r}"
    )
    assert not ok, "Run All reported success on an untouched notebook"
    ran_after = [c.index for c in cells[stop.index + 1 :] if c.execution_count is not None]
    assert not ran_after, f"Run All went on after the error: cells {ran_after} ran"
    if assignment != UNTOUCHED_VALIDATED:
        return

    validation = notebook.validate("2-untouched-validate.png", RUN_TIMEOUT)
    TIMINGS[f"{assignment}: browser, untouched, validate"] = validation.seconds
    assert not validation.passed and VALIDATION_SUCCESS not in validation.text
    assert "NotImplementedError" in validation.text, f"Validate dialog: {validation.text[:1000]!r}"


def test_filled_copy_runs_and_shows_every_figure(assignment, page, lab, artifacts):
    """And, in FILLED_VALIDATED, Validate reports success."""
    release = read(settings.release_notebook(assignment))
    filled = fill_answers(release, reference_answers(read(settings.source_notebook(assignment))))
    path = f"{assignment}/{assignment}_filled.ipynb"
    nbformat.write(filled, lab.root / path)
    figures = figures_per_code_cell(assignment)
    notebook = NotebookPage(page, lab, path, artifacts / assignment)
    notebook.open()

    ok, seconds = notebook.run_all(RUN_TIMEOUT)
    TIMINGS[f"{assignment}: browser, filled, run all"] = seconds
    cells = notebook.cells()
    failed = {c.index: c.output_text[-300:] for c in cells if c.failed}
    assert not failed, f"cells of the filled notebook failed in JupyterLab: {failed}"
    assert ok, "Run All reported a failure"

    code_cells = [c for c in cells if c.type == "code"]
    assert len(code_cells) == len(figures), "the release and the source differ in their code cells"
    missing = []
    for cell, expected in zip(code_cells, figures, strict=True):
        if expected:
            notebook.screenshot_cell(cell.index, f"3-filled-cell{cell.index:02d}-figure.png", block="start")
        if cell.rendered_images < expected:
            missing.append(f"cell {cell.index}: {cell.rendered_images} of {expected} images ({cell.images} in DOM)")
    assert not missing, "figures that did not render: " + "; ".join(missing)
    if assignment != FILLED_VALIDATED:
        return

    validation = notebook.validate("4-filled-validate.png", RUN_TIMEOUT)
    TIMINGS[f"{assignment}: browser, filled, validate"] = validation.seconds
    assert validation.passed and VALIDATION_SUCCESS in validation.text, f"Validate: {validation.text[:2000]!r}"


@pytest.fixture(autouse=True)
def _time_each_test(request, assignment):
    """Wall-clock time of each test (the server's and the browser's start go to the first one)."""
    start = time.perf_counter()
    yield
    which = "untouched" if "untouched" in request.node.name else "filled"
    TIMINGS[f"{assignment}: browser, {which}, whole test"] = time.perf_counter() - start
