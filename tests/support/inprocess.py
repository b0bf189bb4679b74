"""Run a notebook's code cells inside this Python process, the way nbgrader grades them.

nbgrader runs every cell in a kernel, goes on after errors, and gives a graded test
cell its points when the cell raises nothing and writes nothing to stderr. This runner
does the same without a kernel, and keeps a snapshot of the namespace before each
answer cell, so grading a changed answer (a mutant, an alternative) re-runs only the
cells from that answer onwards: well under a second each, instead of a kernel start
and a whole notebook. ``tests/test_variants.py`` checks that it agrees with a real
``nbgrader autograde`` run.
"""

import io
import logging
import re
import traceback
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field

import matplotlib
import matplotlib.pyplot as plt
from nbformat import NotebookNode

from autograder.course.notebooks import grade_id, is_answer_cell, is_graded_test_cell
from tfcourse.figure_text import describe

matplotlib.use("Agg")


@dataclass
class CellOutcome:
    """What running one code cell did."""

    index: int
    grade_id: str | None
    error: str = ""
    stdout: str = ""
    stderr: str = ""
    figures: int = 0
    figure_problems: list[str] = field(default_factory=list)
    figure_text: list[str] = field(default_factory=list)  # titles, axis labels, legends, colour bars
    missing_glyphs: list[str] = field(default_factory=list)  # with draw_figures: what Matplotlib could not draw

    @property
    def passed(self) -> bool:
        return not self.error and not self.stderr


# "1 warm-up steps", "1 epochs": a count that a title or printout writes in the plural for 1.
SINGULAR_IN_PLURAL = re.compile(r"(?<![\d.,])1 (?:[\w-]+ )?(?:steps|epochs|layers|heads|minutes|seconds)\b")


def described(figure: plt.Figure) -> list[str]:
    """Every text of ``figure`` that :func:`tfcourse.figure_text.describe` reads: titles, labels, legends."""
    found = describe(figure)
    texts = [found.get("title", ""), *found.get("colorbars", [])]
    for axes in found.get("axes", []):
        texts += [axes.get("title", ""), axes.get("x", ""), axes.get("y", ""), *axes.get("legend", [])]
    return [text for text in texts if text]


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def glyphs_missing_when_drawn() -> list[str]:
    """Draw every open figure; what Matplotlib said it could not draw. Text glyphs come as a warning ("missing
    from font"), and those of a label holding $math$ only as a log line ("does not have a glyph")."""
    records, logger = _Records(), logging.getLogger("matplotlib")
    logger.addHandler(records)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for number in plt.get_fignums():
                plt.figure(number).canvas.draw()
    finally:
        logger.removeHandler(records)
    said = [str(warning.message) for warning in caught] + records.messages
    return sorted({text for text in said if "missing from font" in text or "does not have a glyph" in text})


def lines_outside(axes: plt.Axes) -> list[str]:
    """Labels of the lines the legend names that are drawn nowhere inside the axes (a baseline off the y-range)."""
    legend = axes.get_legend()
    if legend is None:
        return []
    named = {text.get_text() for text in legend.get_texts()}
    axes.get_xlim(), axes.get_ylim()  # apply any pending autoscaling before the transforms are read
    box = axes.bbox.padded(1.0)
    return [
        line.get_label()
        for line in axes.get_lines()
        if line.get_label() in named
        and not line.get_path().transformed(line.get_transform()).intersects_bbox(box, filled=False)
    ]


def figure_problems(cell_index: int) -> list[str]:
    """Open figures whose axes lack a title (own or the figure's) or an axis label, name a line they do not show,
    or write a count of 1 in the plural in a title."""
    problems = []
    for number in plt.get_fignums():
        figure = plt.figure(number)
        has_suptitle = figure._suptitle is not None and figure._suptitle.get_text()
        for axes in figure.axes:
            if axes.get_label() == "<colorbar>" or not axes.get_visible() or not axes.has_data():
                continue
            where = f"cell {cell_index}, figure {number}"
            if not (axes.get_title() or has_suptitle):
                problems.append(f"{where}: an axes has no title")
            if not axes.get_xlabel() or not axes.get_ylabel():
                problems.append(f"{where}: axes '{axes.get_title()}' lacks an x or y label")
            for label in lines_outside(axes):
                problems.append(f"{where}: the legend names '{label}', drawn outside the axes' limits")
            for title in (axes.get_title(), has_suptitle or ""):
                if SINGULAR_IN_PLURAL.search(title):
                    problems.append(f"{where}: title '{title}' puts a count of 1 in the plural")
    return problems


class InProcessNotebook:
    """A notebook run once with its own answers, ready to grade other answers quickly."""

    def __init__(self, nb: NotebookNode, draw_figures: bool = False):
        """``draw_figures``: render each figure before it is closed, noting each glyph no font had."""
        self.notebook = nb
        self.draw_figures = draw_figures
        self.cells = [cell for cell in nb.cells if cell.cell_type == "code"]
        self.snapshots: dict[str, dict] = {}
        self.graded: dict[tuple, dict[str, CellOutcome]] = {}  # grade()'s outcomes, by its arguments
        self.reference = self._run(0, {"__name__": "__main__"}, {}, take_snapshots=True)

    def grade(self, answers: dict[str, str], tests_of: str | None = None) -> dict[str, CellOutcome]:
        """Outcomes of the graded test cells when answer cells (by grade id) hold ``answers``.

        With ``tests_of`` (an answer's grade id), only that answer's test cells matter. Cells after
        the last test cell that matters cannot change its outcome and are not run: in a notebook
        that trains a model after its exercises, that skips the training. The same answers are
        graded once: a variant's test and the combined submissions share the outcome.
        """
        key = (tuple(sorted(answers.items())), tests_of)
        if key not in self.graded:
            self.graded[key] = self._grade(answers, tests_of)
        return self.graded[key]

    def _grade(self, answers: dict[str, str], tests_of: str | None) -> dict[str, CellOutcome]:
        first = min(i for i, cell in enumerate(self.cells) if grade_id(cell) in answers)
        last = max(
            i
            for i, cell in enumerate(self.cells)
            if is_graded_test_cell(cell) and (tests_of is None or grade_id(cell).startswith(tests_of))
        )
        namespace = dict(self.snapshots[grade_id(self.cells[first])])
        outcomes = self._run(first, namespace, answers, take_snapshots=False, stop=last + 1)
        return {o.grade_id: o for o in outcomes if is_graded_test_cell(self.cells[o.index])}

    def reference_tests(self) -> dict[str, CellOutcome]:
        return {o.grade_id: o for o in self.reference if is_graded_test_cell(self.cells[o.index])}

    def _run(
        self, start: int, namespace: dict, answers: dict[str, str], take_snapshots: bool, stop: int | None = None
    ) -> list[CellOutcome]:
        outcomes = []
        for index in range(start, len(self.cells) if stop is None else stop):
            cell = self.cells[index]
            cell_id = grade_id(cell)
            if take_snapshots and is_answer_cell(cell):
                self.snapshots[cell_id] = dict(namespace)
            source = answers.get(cell_id, cell.source)
            outcomes.append(self._run_cell(index, cell_id, source, namespace, self.draw_figures))
        return outcomes

    @staticmethod
    def _run_cell(index: int, cell_id: str | None, source: str, namespace: dict, draw: bool = False) -> CellOutcome:
        outcome = CellOutcome(index, cell_id)
        stdout, stderr = io.StringIO(), io.StringIO()
        with warnings.catch_warnings(record=True) as caught, redirect_stdout(stdout), redirect_stderr(stderr):
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", message=".*non-interactive.*cannot be shown")
            try:
                exec(compile(source, f"<cell {index} {cell_id or ''}>", "exec"), namespace)
            except BaseException as error:  # a cell may raise anything, even SystemExit
                outcome.error = "".join(traceback.format_exception_only(type(error), error)).strip()
        outcome.stdout = stdout.getvalue()
        outcome.stderr = stderr.getvalue() + "".join(f"{w.category.__name__}: {w.message}\n" for w in caught)
        outcome.figures = len(plt.get_fignums())
        outcome.figure_problems = figure_problems(index)
        outcome.figure_text = [text for number in plt.get_fignums() for text in described(plt.figure(number))]
        if draw:
            outcome.missing_glyphs = [f"cell {index}: {problem}" for problem in glyphs_missing_when_drawn()]
        plt.close("all")
        return outcome
