"""The grader's parts one by one, without kernels: sanitize, the tamper scan, isolation, collect."""

import json
import os
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import psutil
import pytest
from hostile_class import ASSIGNMENT, cell_index, make_course, release, solution

from autograder import tamper
from autograder.collect import collect
from autograder.isolation import Limits, run_limited
from autograder.notebooks import grade_id, nbgrader_meta
from autograder.sanitize import sanitize_notebook


def test_sanitize_leaves_a_clean_notebook_alone() -> None:
    notebook, repairs = sanitize_notebook(solution(), release())
    assert repairs == []
    assert notebook == solution()


def test_sanitize_repairs_each_kind_of_damage() -> None:
    broken = solution()
    test_cell = broken.cells[cell_index(broken, "sdpa_shapes")]
    del test_cell.metadata["nbgrader"]  # stripped metadata, text unchanged
    broken.cells[cell_index(broken, "sdpa_values")].source = "pass"  # edited test
    answer = cell_index(broken, "causal_mask")
    broken.cells.insert(answer, nbformat.from_dict(dict(broken.cells[answer])))  # copied answer cell
    del broken.cells[cell_index(broken, "padding_mask_values")]  # deleted test
    written = cell_index(broken, "written_sqrt_dk")
    original = broken.cells[written]
    broken.cells[written] = nbformat.v4.new_raw_cell(original.source, metadata=original.metadata)
    odd = nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {"grade_id": "not_in_release", "grade": False}})
    del odd["id"]
    broken.cells.append(odd)

    repaired, repairs = sanitize_notebook(broken, release())

    text = "\n".join(repairs)
    for expected in [
        "stripped nbgrader metadata of cell 'sdpa_shapes'",
        "edited test cell 'sdpa_values' restored",
        "duplicate grade id 'causal_mask'",
        "deleted cell 'padding_mask_values' restored",
        "'written_sqrt_dk' changed back from raw to markdown",
        "unknown grade id 'not_in_release'",
    ]:
        assert expected in text, text
    ids = [grade_id(cell) for cell in repaired.cells if grade_id(cell)]
    assert ids == [grade_id(cell) for cell in release().cells if grade_id(cell)]
    assert repaired.cells[cell_index(repaired, "sdpa_values")].source == release().cells[
        cell_index(release(), "sdpa_values")].source  # fmt: skip
    assert nbgrader_meta(repaired.cells[cell_index(repaired, "sdpa_shapes")])["locked"]


@pytest.mark.parametrize(
    ("code", "finding"),
    [
        ("torch.allclose = lambda *a, **k: True", "patches torch.allclose"),
        ("import torch as T\nT.testing.assert_close = print", "patches T.testing.assert_close"),
        ("setattr(F, 'softmax', lambda x, dim: x)", "patches F with setattr"),
        ("import builtins\nbuiltins.len = lambda x: 0", "patches builtins.len"),
        ("get_ipython().input_transformers_cleanup.append(lambda l: l)", "input_transformers_cleanup"),
        ("def check_close(*a, **k):\n    pass", "rebinds check_close"),
        ("data = open('/srv/course/solutions/01_attention/01_attention.ipynb').read()", "mentions grader files"),
        ("import socket", "network use"),
        ("import urllib.request", "network use"),
        ("import os\nos._exit(0)", "calls os._exit"),
        ("import subprocess", "imports subprocess"),
        ("def f():\n    globals()['check_close'] = print", "calls globals"),
        ("import sys\nsys.modules['torch'].allclose = max", "touches sys.modules"),
    ],
)
def test_scan_names_the_trick(code: str, finding: str) -> None:
    source = nbformat.read(Path(__file__).parents[2] / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    findings = tamper.scan_source(code, tamper.notebook_bindings(source))
    assert any(finding in f for f in findings), findings


def test_scan_is_quiet_on_honest_answers() -> None:
    assert tamper.scan(solution(), nbformat.read(Path(__file__).parents[2] / "solutions" / ASSIGNMENT /
                                                 f"{ASSIGNMENT}.ipynb", 4)) == []  # fmt: skip
    assert tamper.scan(release(), nbformat.read(Path(__file__).parents[2] / "solutions" / ASSIGNMENT /
                                                f"{ASSIGNMENT}.ipynb", 4)) == []  # fmt: skip


def test_clean_run_keeps_definitions_only() -> None:
    protected = {"torch": "import torch", "check_close": ""}
    code = ("import torch\nimport numpy as torch\nLIMIT = -1e9\ncheck_close = print\n"
            "def check_close(*a):\n    pass\ntorch.allclose = print\ndef answer(x):\n    return x + LIMIT\n"
            "class Layer:\n    pass\nprint('top level')\n")  # fmt: skip
    kept = tamper.extract_definitions(code, protected)
    assert kept.splitlines()[0] == "import torch"
    assert "numpy" not in kept and "check_close" not in kept and "allclose" not in kept and "print" not in kept
    assert "def answer" in kept and "class Layer" in kept and "LIMIT = -1000000000.0" in kept


def test_isolation_stops_a_runaway_and_its_detached_children(tmp_path: Path) -> None:
    marker = tmp_path / "daemon.pid"
    script = (
        "import os, subprocess, time\n"
        f"p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        f"open({str(marker)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(300)\n"
    )
    start = time.monotonic()
    outcome = run_limited([sys.executable, "-c", script], Limits(wall_seconds=3), tmp_path / "run")
    assert outcome.timed_out and time.monotonic() - start < 30
    daemon = int(marker.read_text())
    time.sleep(0.5)
    assert not psutil.pid_exists(daemon) or psutil.Process(daemon).status() == psutil.STATUS_ZOMBIE


def test_isolation_memory_limit_raises_memory_error(tmp_path: Path) -> None:
    script = "try:\n    x = bytearray(3 * 2**30)\nexcept MemoryError:\n    raise SystemExit(42)\n"
    outcome = run_limited([sys.executable, "-c", script], Limits(wall_seconds=60, memory_bytes=2**30), tmp_path)
    assert outcome.returncode == 42, outcome


def test_isolation_gives_each_run_its_own_home(tmp_path: Path) -> None:
    script = "import os; print(os.environ['HOME'], os.environ['IPYTHONDIR'])"
    outcome = run_limited([sys.executable, "-c", script], Limits(wall_seconds=30), tmp_path / "one")
    assert str(tmp_path / "one") in outcome.output_tail and os.environ.get("HOME", "") not in outcome.output_tail


def test_collect_sorts_an_lms_download(tmp_path: Path) -> None:
    root = tmp_path / "course"
    make_course(root)
    good = nbformat.writes(solution())
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr(f"smithjane_1234_5678_{ASSIGNMENT}.ipynb", good)
        handle.writestr(f"doejohn_99_{ASSIGNMENT}-1.ipynb", good)
        handle.writestr(f"Ann Lee_42_assignsubmission_file_/{ASSIGNMENT}.ipynb", good)
        handle.writestr(f"brokenbob_7_{ASSIGNMENT}.ipynb", "{ not json")
        handle.writestr("smithjane_1234_5678_notes.pdf", b"%PDF")
    found = collect(archive, root)
    students = {student for student, _, _ in found.collected}
    assert students == {"smithjane", "doejohn", "Ann_Lee", "brokenbob"}
    assert found.unmatched == ["smithjane_1234_5678_notes.pdf"]
    assert found.unreadable == [f"brokenbob_7_{ASSIGNMENT}.ipynb"]
    placed = root / "grading" / "submitted" / "smithjane" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert json.loads(placed.read_text())["cells"]
