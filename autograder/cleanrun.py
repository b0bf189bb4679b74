"""The clean re-run's job: execute a plan of cells in a fresh zygote child, record each test.

The plan (built by :func:`autograder.tamper.clean_plan`) is the source notebook's code with
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


class CellTimeout(Exception):
    pass


def on_alarm(signum: int, frame: object) -> None:
    raise CellTimeout("cell timed out")


def without_magics(source: str) -> str:
    """Drop IPython-only lines (``%matplotlib inline``, ``!pip ...``), which plain Python cannot run."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


def run_plan(plan: list[dict], results_path: str, cell_timeout: int) -> None:
    """Run the cells of ``plan`` in order; write ``{grade_id: outcome}`` of each test to ``results_path``.

    The plan (hidden tests included) comes with the job, in memory: no file the student's code could read holds it.
    """
    os.environ["NBGRADER_EXECUTION"] = "autograde"  # the notebooks' fast mode, as under nbgrader
    signal.signal(signal.SIGALRM, on_alarm)
    namespace: dict = {"__name__": "__main__"}
    results: dict[str, dict] = {}
    for cell in plan:
        signal.alarm(cell_timeout)
        try:
            exec(
                compile(without_magics(cell["source"]), f"<{cell['kind']} {cell['grade_id']}>", "exec"),
                namespace,
            )
            outcome = {"passed": True, "message": ""}
        except BaseException as error:  # noqa: B036 (a test may fail with anything, SystemExit included)
            lines = traceback.format_exception_only(type(error), error)
            outcome = {"passed": False, "message": "".join(lines).strip()[:2000]}
        finally:
            signal.alarm(0)
        if cell["kind"] == "test":
            results[cell["grade_id"]] = outcome
            Path(results_path).write_text(json.dumps(results))
