"""Per-cell time limits from the reference run: the formula, the timing read from nbclient, the kept times."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from autograder.course.notebooks import cell_key
from autograder.course.settings import REPO_ROOT, source_notebook
from autograder.isolated.protocol import CleanRerunRequest, PlanCell, encode
from autograder.launch.limits import Limits
from autograder.pipeline.job.cell_limits import CellLimits, cell_seconds
from autograder.pipeline.job.clean_rerun import clean_plan
from autograder.pipeline.storage.reference_times import load_times, save_times, sources_digest
from tests.grader.hostile_class import ASSIGNMENT, solution
from tests.support.course import ThrowawayCourse


def test_a_limit_is_ten_times_the_reference_plus_a_margin_capped_by_the_cell_timeout() -> None:
    limits = CellLimits.from_times({"nb": {"fast": 0.02, "slow": 4.0, "training": 30.0}}, Limits(cell_timeout=120))
    assert limits.of("nb") == {"fast": 5.2, "slow": 45.0, "training": 120}
    assert limits.of("other") == {} and limits.default == 120
    assert limits.describe("nb", "slow") == "45 s, 10x the reference's 4.00 s + 5 s"
    assert limits.describe("nb", "added by the student") == "120 s, the cell timeout"
    configured = Limits(cell_timeout=120, reference_factor=2, reference_margin=1)  # GradeSettings set otherwise
    halved = CellLimits.from_times({"nb": {"slow": 4.0}}, configured)
    assert halved.of("nb") == {"slow": 9.0} and halved.describe("nb", "slow") == "9 s, 2x the reference's 4.00 s + 1 s"


def timing(began: str, ended: str) -> dict[str, str]:
    """nbclient's record of a cell run between two seconds of the same minute."""
    return {"iopub.execute_input": f"2026-11-22T20:45:{began}Z", "shell.execute_reply": f"2026-11-22T20:45:{ended}Z"}


def test_cell_seconds_reads_nbclients_timing_by_grade_id_or_text() -> None:
    timed = new_code_cell("x = 1", metadata={"execution": timing("36.5", "38.0")})
    graded = new_code_cell(
        "assert x", metadata={"nbgrader": {"grade_id": "x_test"}, "execution": timing("38.0", "38.25")}
    )
    untimed = new_code_cell("y = 2")
    seconds = cell_seconds(new_notebook(cells=[timed, graded, untimed]))
    assert seconds == {cell_key(timed): 1.5, "x_test": 0.25}
    assert cell_key(timed).startswith("text:") and cell_key(new_code_cell("  x = 1\n")) == cell_key(timed)


def test_kept_reference_times_hold_only_while_the_notebook_is_unchanged(throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course(ASSIGNMENT, release=False)
    grading, notebooks = course.grading, course.source_folder(ASSIGNMENT)
    digest = sources_digest(notebooks)
    save_times(grading, ASSIGNMENT, digest, {ASSIGNMENT: {"sdpa": 0.1}})
    assert load_times(grading, ASSIGNMENT, digest) == {ASSIGNMENT: {"sdpa": 0.1}}
    (notebooks / f"{ASSIGNMENT}.ipynb").write_text((notebooks / f"{ASSIGNMENT}.ipynb").read_text() + "\n")
    assert load_times(grading, ASSIGNMENT, sources_digest(notebooks)) is None
    assert load_times(grading, "another", digest) is None


def test_the_clean_plan_carries_each_cells_limit() -> None:
    source = nbformat.read(source_notebook(ASSIGNMENT), as_version=4)
    plan = clean_plan(solution(), source, {"sdpa_values": 7}).cells
    assert {cell.grade_id: cell.limit for cell in plan if cell.kind == "test"}["sdpa_values"] == 7
    assert all(cell.limit is None for cell in plan if cell.grade_id != "sdpa_values")


SLOW_TO_DESCRIBE = """
import time

class SlowToDescribe(Exception):
    def __str__(self):
        time.sleep(1.0)  # past the cell's limit, while the failure is being reported
        return "took its time"

raise SlowToDescribe()
"""


def test_a_cells_alarm_is_disarmed_before_its_failure_is_reported(tmp_path: Path) -> None:
    """The alarm stops with the cell: a failure slow to report (a memory hog's clean-up, an error slow to print)
    is reported whole, and the run goes on past it and past a cell stopped at its limit."""
    plan = (
        PlanCell("test", "slow_failure", SLOW_TO_DESCRIBE, limit=0.3),
        PlanCell("test", "endless", "while True:\n    pass", limit=0.3),
        PlanCell("test", "after", "assert 1 + 1 == 2", limit=0.3),
    )
    results_path = tmp_path / "results.json"
    request = encode(CleanRerunRequest(plan, str(results_path), cell_timeout=5))
    script = (
        "import sys\n"
        "from autograder.isolated.protocol import CleanRerunRequest, decode\n"
        "decode(sys.stdin.read(), CleanRerunRequest).run()\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], input=request, text=True, capture_output=True, timeout=60, cwd=REPO_ROOT
    )
    assert run.returncode == 0, run.stderr
    results = json.loads(results_path.read_text())
    assert results["slow_failure"] == {"passed": False, "message": "SlowToDescribe: took its time"}
    assert results["endless"]["message"].startswith("CellTimeout")
    assert results["after"] == {"passed": True, "message": ""}
