"""The capacity benchmark's driver, run small: its measurements are real.

``python -m benchmarks.hub_capacity`` with one level of two students (real system users on the
course's hub, in the classroom test's prefix: its environment is built once per run), each
fetching 01, running its first three code cells, validating and submitting. Every cell must have
had its execute_reply, every latency must be a real wait (above zero, the slowest at least the
time a kernel takes to run the notebook's first cell), the 95th percentile must be the one the
recorded latencies give, the students' own processes must have been seen (memory and CPU), and
each student's hand-in must be in the exchange's inbound, read there, not taken from the driver.

Root only (it makes system users and runs JupyterHub with LocalProcessSpawner): elsewhere it skips.
"""

import json
import math
import os
import time
from pathlib import Path

import nbformat
import pytest

from benchmarks.hub_capacity import main
from classroom.layout import COURSE_ID, HubLayout
from testbed.hub import HUB_MODULE_TIMEOUT, TEST_PREFIX

pytestmark = [pytest.mark.slow, pytest.mark.timeout(HUB_MODULE_TIMEOUT)]
STUDENTS, CELLS, ASSIGNMENT, STEM = 2, 3, "01_attention", "tfcap-t"


@pytest.fixture(scope="module")
def small_ramp(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, float]:
    """The driver's JSON report of one 2-student level, where it wrote it, and the run's seconds."""
    if os.geteuid() != 0:
        pytest.skip("the capacity driver makes system users and runs JupyterHub as root (CI runs as root)")
    out = tmp_path_factory.mktemp("hub-capacity")
    started = time.monotonic()
    main(["--students", str(STUDENTS), "--notebooks", ASSIGNMENT, "--cells", str(CELLS), "--think", "0.2",
          "--stagger", "0.2", "--prefix", str(TEST_PREFIX), "--stem", STEM, "--out", str(out), "--max-minutes", "5",
          "--cull-idle", "0", "--kernel-cull-idle", "0"])
    seconds = time.monotonic() - started
    print(f"the 2-student capacity level ran in {seconds:.1f} s")
    return json.loads((out / "hub_capacity.json").read_text()), out, seconds


def test_every_cell_replied_after_a_real_wait(small_ramp: tuple[dict, Path, float]) -> None:
    report, _, _ = small_ramp
    (level,) = report["levels"]
    cells = [cell for record in level["records"] for cell in record["cells"]]
    failures = [failure for record in level["records"] for failure in record["failures"]]
    assert not failures, f"the simulated students met failures (the hub's log is beside the report): {failures}"
    assert len(cells) == STUDENTS * CELLS == level["cells_replied"], (
        f"expected {STUDENTS} students x {CELLS} cells, each with its execute_reply; the driver recorded {cells}"
    )
    not_ok = [cell for cell in cells if cell["status"] != "ok"]
    assert not not_ok, f"every cell of the reference answers should reply ok; these did not: {not_ok}"
    # 01's first code cell imports torch and the course's helpers: a kernel takes a good part of a second for it.
    first_cells = [cell["seconds"] for cell in cells if cell["cell"] == 0]
    assert min(cell["seconds"] for cell in cells) > 0 and min(first_cells) > 0.05, (
        f"latencies should be real waits (the first cell imports torch, over 0.05 s); the driver recorded "
        f"{[cell['seconds'] for cell in cells]}: is it timing the execute_request's sending, not its reply?"
    )


def test_the_percentiles_are_those_of_the_recorded_latencies(small_ramp: tuple[dict, Path, float]) -> None:
    report, out, _ = small_ramp
    (level,) = report["levels"]
    cells = [cell for record in level["records"] for cell in record["cells"]]
    latencies = sorted(cell["seconds"] for cell in cells)
    nearest_rank = latencies[math.ceil(0.95 * len(latencies)) - 1]
    assert level["p95_cell_s"] == nearest_rank, (
        f"p95 should be the nearest-rank 95th percentile of {latencies}, {nearest_rank}; the report says "
        f"{level['p95_cell_s']}"
    )
    # The watched figure leaves each kernel's first cell out (it imports torch), which is reported on its own.
    warm = sorted(cell["seconds"] for cell in cells if cell["cell"] > 0)
    first = max(cell["seconds"] for cell in cells if cell["cell"] == 0)
    assert level["p95_by_notebook"] == {ASSIGNMENT: warm[math.ceil(0.95 * len(warm)) - 1]}, (
        f"after the first cell, the p95 of {warm} is {warm[math.ceil(0.95 * len(warm)) - 1]}; the report says "
        f"{level['p95_by_notebook']}"
    )
    assert level["first_cell_by_notebook"] == {ASSIGNMENT: first}, level["first_cell_by_notebook"]
    assert level["p50_cell_s"] == latencies[math.ceil(0.5 * len(latencies)) - 1] <= level["p95_cell_s"]
    table = (out / "hub_capacity.md").read_text()
    row = (f"| {STUDENTS} | {level['p50_cell_s']:.2f} | {level['p95_cell_s']:.2f} | "
           f"{level['p95_by_notebook'][ASSIGNMENT]:.2f} | {first:.2f} |")
    assert row in table, (
        f"the markdown table should carry the level's figures; it reads:\n{table}"
    )


def test_the_students_processes_were_measured(small_ramp: tuple[dict, Path, float]) -> None:
    report, _, _ = small_ramp
    (level,) = report["levels"]
    # Two servers and two kernels (torch imported) hold well over 200 MiB; each student's session costs CPU-seconds.
    assert level["students_peak_rss_gib"] * 1024 > 200, (
        f"the students' servers and kernels should have been sampled (over 200 MiB); the report says "
        f"{level['students_peak_rss_gib']} GiB: are their processes found by their accounts' uids?"
    )
    assert level["students_cpu_s"] > 1, f"the students' processes used CPU; the report says {level['students_cpu_s']}"


def test_every_submission_arrives_in_the_inbound(small_ramp: tuple[dict, Path, float]) -> None:
    report, _, _ = small_ramp
    (level,) = report["levels"]
    inbound = HubLayout(TEST_PREFIX).exchange / COURSE_ID / "inbound"
    for record in level["records"]:
        handins = sorted(inbound.glob(f"{record['name']}+{ASSIGNMENT}+*"))
        assert len(handins) == 1, (
            f"{record['name']} submitted {record['submitted']} (steps {record['steps']}); the inbound should hold "
            f"one hand-in of {ASSIGNMENT} by them and holds {[path.name for path in handins]}"
        )
        notebooks = list(handins[0].glob("*.ipynb"))
        assert notebooks, f"{record['name']}'s hand-in {handins[0].name} holds no notebook"
        answered = nbformat.read(notebooks[0], as_version=4)
        assert "raise NotImplementedError" not in "".join(cell.source for cell in answered.cells), (
            "the hand-in should be the notebook the student answered (saved through the contents API) "
            "before submitting; it still holds the release's unanswered cells"
        )
    assert level["in_inbound"] == level["submitted"] == STUDENTS
