"""Check a notebook anywhere: run its visible tests and print one line per exercise.

Two ways in, one table out:

- in a notebook, the last cell calls :func:`check_notebook`: it reads this notebook's file (the path
  Jupyter Server gives the kernel, VS Code's ``__vsc_ipynb_file__``, Colab's copy of the open notebook,
  or the notebook of that name in the working folder) and runs its visible test cells in the kernel's
  namespace, without running any other cell again;
- from a shell, ``python -m tfcourse.check NOTEBOOK.ipynb`` runs the whole notebook in fast mode with
  nbclient and reads each test cell's outcome; it exits 1 when a visible test fails (or an exercise is
  not attempted), so an autograding step (GitHub Classroom) can use it.

In a kernel the check reuses what this kernel already knows: ``tfcourse`` watches every cell run (an IPython
``post_run_cell`` callback, registered when the setup cell imports it), and a test cell that ran after the last
run of the cell defining its exercise keeps that outcome; only the others run again. After *Restart Kernel and
Run All Cells* nothing runs twice. Under the grader (nbgrader) the check cell does nothing: the grader grades.

Each exercise (an answer cell and the graded test cells under it) is *passed*, *failed* (with the first
line of the first failure) or *not attempted* (every test stopped at the untouched stub's
``NotImplementedError``). The points are those of the visible test cells' nbgrader metadata; hidden tests
run only when the notebook is graded, so passing here is necessary, not sufficient. Only the file's own
visible tests run: this module holds no test and no answer.
"""

import argparse
import contextlib
import io
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tfcourse.language import EDITIONS, ENGLISH, speaking
from tfcourse.messages import display_width, tr
from tfcourse.modes import FAST_ENV_VAR, under_grader

# The name of the exception an untouched answer raises (``raise NotImplementedError(tfcourse.todo_left())``).
STUB_ERROR = "NotImplementedError"
CHECK_CALL = "check_notebook("  # the check cell's own call: never run again by the check
DEFINED = re.compile(r"^(?:async\s+)?(?:def|class)\s+(\w+)", re.MULTILINE)
MESSAGE_WIDTH = 90  # columns of a failure's first line kept in the table
COLAB_TIMEOUT_S = 30  # how long the check waits for Colab's frontend to send the open notebook
CELL_TIMEOUT_S = 600  # one cell, from the command (nbgrader's own per-cell default is 30 s; training cells need more)


@dataclass
class Test:
    grade_id: str
    points: float
    source: str


@dataclass
class Exercise:
    """An answer cell and the graded test cells that follow it."""

    name: str
    tests: list[Test] = field(default_factory=list)

    @property
    def points(self) -> float:
        return sum(test.points for test in self.tests)


@dataclass
class Failure:
    """How one test cell failed: the exception's class name and its message."""

    error: str
    message: str

    def first_line(self) -> str:
        line = next((text for text in self.message.splitlines() if text.strip()), "")
        return clipped(f"{self.error}: {line}" if self.error != "AssertionError" or not line else line)


def clipped(text: str) -> str:
    """``text`` cut to the table's width of a message (:data:`MESSAGE_WIDTH` columns)."""
    return text if display_width(text) <= MESSAGE_WIDTH else text[: MESSAGE_WIDTH - 1] + "…"


def _nbgrader(cell: Mapping) -> dict:
    metadata = cell.get("metadata") or {}
    return metadata.get("nbgrader") or {}


def _source(cell: Mapping) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def exercises(cells: Iterable[Mapping]) -> list[Exercise]:
    """The notebook's exercises with their visible test cells, in order; an exercise without a test is left out."""
    found: list[Exercise] = []
    current: Exercise | None = None
    for cell in cells:
        meta = _nbgrader(cell)
        if cell.get("cell_type") != "code" or not meta:
            continue
        if meta.get("solution") and not meta.get("grade"):
            defined = DEFINED.search(_source(cell))
            current = Exercise(defined.group(1) if defined else str(meta.get("grade_id", "?")))
            found.append(current)
        elif meta.get("grade") and not meta.get("solution"):
            test = Test(str(meta.get("grade_id", "?")), float(meta.get("points", 0) or 0), _source(cell))
            if current is None:  # a test above every answer: its own line
                current = Exercise(test.grade_id)
                found.append(current)
            current.tests.append(test)
    return [exercise for exercise in found if exercise.tests]


def outcome(failures: list[Failure]) -> str:
    """``passed``, ``not attempted`` (every test met the stub) or ``failed``."""
    if not failures:
        return "passed"
    if all(failure.error == STUB_ERROR for failure in failures):
        return "not attempted"
    return "failed"


def table(results: list[tuple[Exercise, list[Failure]]]) -> str:
    """The report, in this run's language: one row per exercise, then the totals."""
    rows = [(tr("exercise"), tr("result"), tr("points"))]
    earned = total = 0.0
    for exercise, failures in results:
        status = outcome(failures)
        total += exercise.points
        if status == "passed":
            earned += exercise.points
            text = tr("passed")
        elif status == "not attempted":
            text = tr("not attempted")
        else:
            first = next(failure for failure in failures if failure.error != STUB_ERROR)
            text = tr("failed: {error}", error=first.first_line())
        rows.append((exercise.name, text, f"{exercise.points:g}"))
    widths = [max(display_width(row[column]) for row in rows) for column in (0, 2)]
    lines = [
        f"{_pad(name, widths[0])}  {_pad(points, widths[1], right=True)}  {text}" for name, text, points in rows
    ]
    lines.insert(1, "-" * max(display_width(line) for line in lines))
    lines.append(tr("visible tests passed for {earned:g} of {total:g} points; hidden tests run when the notebook "
                    "is graded.", earned=earned, total=total))
    return "\n".join(lines)


def _pad(text: str, width: int, right: bool = False) -> str:
    gap = " " * (width - display_width(text))
    return gap + text if right else text + gap


def passed_all(results: list[tuple[Exercise, list[Failure]]]) -> bool:
    return all(not failures for _, failures in results)




def notebook_language(notebook: Mapping) -> str:
    """The edition the notebook's metadata names (``tfcourse.edition``), else English."""
    named = ((notebook.get("metadata") or {}).get("tfcourse") or {}).get("edition")
    return named if named in EDITIONS else ENGLISH


# In a kernel ------------------------------------------------------------------------------------------------

# Every cell this kernel ran since tfcourse was imported, in order: its text and how it failed (None: it did not).
HISTORY: list[tuple[str, Failure | None]] = []


def record(result: object) -> None:
    """IPython's ``post_run_cell`` callback: remember the cell and its outcome."""
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    info = getattr(result, "info", None)
    HISTORY.append((getattr(info, "raw_cell", "") or "", None if error is None else
                    Failure(type(error).__name__, str(error))))


def watch(shell: object) -> None:
    """Register :func:`record` once with the IPython ``shell``."""
    if record not in shell.events.callbacks["post_run_cell"]:
        shell.events.register("post_run_cell", record)


def known_outcome(exercise: Exercise, test: Test) -> tuple[bool, Failure | None]:
    """``(True, outcome)`` when ``test`` ran after the last run of the cell defining ``exercise``; else
    ``(False, None)``: it must run again."""
    ran = [i for i, (text, _) in enumerate(HISTORY) if text.strip() == test.source.strip()]
    defined = [i for i, (text, _) in enumerate(HISTORY) if exercise.name in DEFINED.findall(text)]
    if ran and ran[-1] > max(defined, default=-1):
        return True, HISTORY[ran[-1]][1]
    return False, None


def run_tests(exercise: Exercise, namespace: dict, transform: Callable[[str], str]) -> list[Failure]:
    """Run an exercise's test cells in ``namespace`` (the kernel's), their printing held back; the failures."""
    failures = []
    for test in exercise.tests:
        known, failure = known_outcome(exercise, test)
        if known:
            failures += [failure] if failure is not None else []
            continue
        held = io.StringIO()
        try:
            with contextlib.redirect_stdout(held), contextlib.redirect_stderr(held):
                exec(compile(transform(test.source), f"<test {test.grade_id}>", "exec"), namespace)
        except Exception as error:  # a test may raise anything; each is reported, none stops the check
            failures.append(Failure(type(error).__name__, str(error)))
    return failures


def _colab_notebook() -> dict | None:
    """The open notebook as Colab's frontend holds it (Colab keeps no file of it beside the kernel); None off Colab.

    Asked only where Colab's marker is the service's: Kaggle's image is built on Colab's and carries
    ``google.colab`` too, but nothing says Kaggle's frontend answers Colab's requests. colabtools'
    ``google/colab/_message.py``: ``blocking_request`` returns the frontend's reply (for ``get_ipynb``,
    ``{"ipynb": notebook}``), None when none came within the timeout, and raises ``MessageError`` when the
    frontend answered with an error. Each failure is said (:class:`FileNotFoundError`, which the check cell
    prints), never a traceback, and never answered from a stale file of the same name.
    """
    from tfcourse.hosted import marked_service

    if marked_service() != "Colab":
        return None
    try:
        from google.colab import _message  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        reply = _message.blocking_request("get_ipynb", request="", timeout_sec=COLAB_TIMEOUT_S)
    except Exception as error:  # MessageError, or whatever another colabtools raises: said, not raised
        raise _colab_failure(tr("it answered {error}", error=clipped(f"{type(error).__name__}: {error}"))) from None
    if reply is None:
        raise _colab_failure(tr("no answer within {seconds} s", seconds=COLAB_TIMEOUT_S))
    notebook = reply.get("ipynb") if isinstance(reply, dict) else None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise _colab_failure(tr("an unexpected answer: {reply}", reply=clipped(repr(reply))))
    return notebook


def _colab_failure(reason: str) -> FileNotFoundError:
    return FileNotFoundError(tr("Colab did not send this notebook ({reason}). Run this cell again; or download the "
                                "notebook (File > Download) and run `python -m tfcourse.check NOTEBOOK.ipynb` in a "
                                "terminal.", reason=reason))


def find_notebook(name: str | None, namespace: Mapping) -> dict:
    """This kernel's notebook: Jupyter Server's path, VS Code's, Colab's copy, else ``name``.ipynb here."""
    candidates = [os.environ.get("JPY_SESSION_NAME", ""), str(namespace.get("__vsc_ipynb_file__", ""))]
    for candidate in candidates:
        if candidate.endswith(".ipynb") and Path(candidate).is_file():
            return json.loads(Path(candidate).read_text(encoding="utf-8"))
    colab = _colab_notebook()
    if colab is not None:
        return colab
    here = Path.cwd() / f"{name}.ipynb" if name else None
    if here is not None and here.is_file():
        return json.loads(here.read_text(encoding="utf-8"))
    raise FileNotFoundError(tr("cannot find this notebook's file: save it, or run `python -m tfcourse.check "
                               "NOTEBOOK.ipynb` in a terminal."))


def check_notebook(name: str | None = None) -> bool:
    """Run this notebook's visible tests in the kernel and print the table; True when every exercise passed.

    ``name`` is the notebook's file name without ``.ipynb``, used where nothing else tells the path.
    """
    if under_grader():
        return True
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    namespace = shell.user_ns if shell is not None else vars(sys.modules["__main__"])
    transform = shell.transform_cell if shell is not None else str
    try:
        notebook = find_notebook(name, namespace)
    except FileNotFoundError as error:  # said, not raised: a run of the notebook never ends on its last cell's error
        print(error)
        return False
    with speaking(notebook_language(notebook)):
        results = [(exercise, run_tests(exercise, namespace, transform))
                   for exercise in exercises(notebook.get("cells", []))]
        print(table(results))  # the check cell's output is this table
    return passed_all(results)


# From a shell -----------------------------------------------------------------------------------------------


def executed_failures(cells: Iterable[Mapping]) -> dict[str, list[Failure]]:
    """Each executed graded test cell's failure (an error output), by grade id."""
    failures: dict[str, list[Failure]] = {}
    for cell in cells:
        meta = _nbgrader(cell)
        if cell.get("cell_type") == "code" and meta.get("grade") and not meta.get("solution"):
            failures[str(meta.get("grade_id", "?"))] = [
                Failure(output.get("ename", ""), output.get("evalue", ""))
                for output in cell.get("outputs", [])
                if output.get("output_type") == "error"
            ]
    return failures


def check_file(path: Path) -> list[tuple[Exercise, list[Failure]]]:
    """Run the notebook at ``path`` in fast mode (all cells but the check cell) and read its tests' outcomes."""
    import nbformat  # the notebook tools load only for the command
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    notebook.cells = [cell for cell in notebook.cells if CHECK_CALL not in cell.source]
    os.environ[FAST_ENV_VAR] = "1"
    client = NotebookClient(notebook, timeout=CELL_TIMEOUT_S, allow_errors=True,
                            resources={"metadata": {"path": str(path.parent.resolve())}})
    client.execute()
    failures = executed_failures(notebook.cells)
    return [(exercise, [f for test in exercise.tests for f in failures.get(test.grade_id, [])])
            for exercise in exercises(notebook.cells)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfcourse.check", description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path, help="the .ipynb file to run in fast mode and check")
    path = parser.parse_args(argv).notebook
    language = notebook_language(json.loads(path.read_text(encoding="utf-8")))
    with speaking(language):
        results = check_file(path)
        print(table(results))  # the command's report
    return 0 if passed_all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
