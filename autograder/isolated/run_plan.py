"""The clean re-run's job: execute a plan of cells in a fresh zygote child, record each test.

The plan (built by :func:`autograder.pipeline.job.clean_rerun.clean_plan`) is the source notebook's code with
each answer cell replaced by the definitions extracted from the student's answer; no IPython
is involved, so no input transformer or kernel state of the student's run is present.
The results file is rewritten as soon as each test's result is known, so a run that dies
half-way still reports the tests before it.
"""

import json
import os
import signal
import traceback
from pathlib import Path

from autograder.isolated.protocol import CleanRerunRequest
from tfcourse.language import EDITION_VARIABLE


class CellTimeout(Exception):
    pass


def on_alarm(signum: int, frame: object) -> None:
    raise CellTimeout("cell timed out")


def describe(error: BaseException, limit: float) -> str:
    """The failure message of a cell that raised ``error``."""
    if isinstance(error, CellTimeout):
        return f"CellTimeout: stopped after its limit of {limit:g} s"
    try:
        return "".join(traceback.format_exception_only(type(error), error)).strip()[:2000]
    except MemoryError:
        return type(error).__name__


def run_plan(request: CleanRerunRequest) -> None:
    """Run the cells of the plan in order; write ``{grade_id: outcome}`` of each test to the results file,
    and ``{"answer <grade_id>": outcome}`` (or ``added``) of each of the student's cells that failed.

    Each cell stops after its ``limit`` (seconds), or the request's cell timeout when it has none.

    The plan (hidden tests included) comes with the job, in memory: no file the student's code could read holds it.
    """
    os.environ["NBGRADER_EXECUTION"] = "autograde"  # the notebooks' fast mode, as under nbgrader
    os.environ[EDITION_VARIABLE] = request.edition  # the messages in the student's language
    signal.signal(signal.SIGALRM, on_alarm)
    namespace: dict = {"__name__": "__main__"}
    results: dict[str, dict] = {}
    for cell in request.plan:
        outcome = run_cell(cell.source, f"<{cell.kind} {cell.grade_id}>", namespace, cell.limit or request.cell_timeout)
        if cell.kind == "test":
            results[cell.grade_id] = outcome
        elif cell.kind in ("answer", "added") and not outcome["passed"]:  # what it defines below the error is missing
            results[f"{cell.kind} {cell.grade_id}"] = outcome
        else:
            continue
        Path(request.results_path).write_text(json.dumps(results))


def run_cell(source: str, name: str, namespace: dict, limit: float) -> dict:
    """Execute one cell under its time limit; ``{"passed", "message"}``.

    The alarm is disarmed in an inner ``finally``, inside the ``try`` that reports failures: an
    alarm that fires as the cell ends (a memory hog's clean-up can take seconds) raises where it
    is still caught, never in the handler, where it would end the whole run.
    """
    try:
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            exec(compile(source, name, "exec"), namespace)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as error:  # noqa: B036 (a test may fail with anything, SystemExit included)
        # Let go of the failed cell's frames first: what they hold (a memory hog's list) is freed
        # now, so describing the error cannot itself run out of memory and end the whole run.
        error.__traceback__ = None
        return {"passed": False, "message": describe(error, limit)}
    return {"passed": True, "message": ""}
