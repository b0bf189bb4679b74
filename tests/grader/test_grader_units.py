"""The grader's parts one by one, without kernels: sanitize, the tamper scan, isolation, collect."""

import json
import os
import socket
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import psutil
import pytest

from autograder.cli import main
from autograder.course.notebook_code import notebook_bindings
from autograder.course.notebooks import fill_answers, grade_id, nbgrader_meta, reference_answers
from autograder.course.settings import release_notebook, source_notebook
from autograder.isolated.protocol import (
    ChildJob,
    JobReply,
    KernelRequest,
    Request,
    ScriptRequest,
    SocketJob,
    decode,
    encode,
)
from autograder.launch.limits import Limits, Outcome
from autograder.launch.sandbox import bwrap_available
from autograder.launch.zygote import MARKER_ENV, SandboxSpec, Zygote
from autograder.pipeline.commands.collect import collect
from autograder.pipeline.job import clean_rerun, static_scan
from autograder.pipeline.job.kept_code import extract_definitions
from autograder.pipeline.job.sanitize import sanitize_notebook
from tests.grader.hostile_class import (
    ASSIGNMENT,
    attention_answer,
    cell_index,
    release,
    solution,
    with_answer,
)
from tests.support.course import ThrowawayCourse


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
        cell_index(release(), "sdpa_values")].source
    assert nbgrader_meta(repaired.cells[cell_index(repaired, "sdpa_shapes")])["locked"]


def test_sanitize_says_what_it_checked_and_reads_a_copy_s_name(
    throwaway_course: ThrowawayCourse, capsys: pytest.CaptureFixture[str]
) -> None:
    course = throwaway_course(ASSIGNMENT)
    for student, name in [("ann", f"{ASSIGNMENT}.ipynb"), ("bob", f"{ASSIGNMENT} (1).ipynb")]:
        course.grading.submitted(student, ASSIGNMENT).mkdir(parents=True)
        nbformat.write(solution(), course.grading.submitted(student, ASSIGNMENT) / name)
    assert main(["sanitize", "--root", str(course.root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"bob                  {ASSIGNMENT}: took '{ASSIGNMENT} (1).ipynb' as {ASSIGNMENT}.ipynb" in out
    assert out[-1] == "checked 2 notebooks of 2 students: nothing to repair"

    broken = solution()
    del broken.cells[cell_index(broken, "padding_mask_values")]
    nbformat.write(broken, course.grading.submitted("bob", ASSIGNMENT) / f"{ASSIGNMENT} (1).ipynb")
    assert main(["sanitize", "--root", str(course.root)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"bob                  {ASSIGNMENT}: deleted cell 'padding_mask_values' restored from the release" in out
    assert out[-1].startswith("checked 2 notebooks of 2 students: 1 need repairs (--write applies them")


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
    source = nbformat.read(source_notebook(ASSIGNMENT), 4)
    findings = static_scan.scan_source(code, notebook_bindings(source))
    assert any(finding in f for f in findings), findings


def test_scan_is_quiet_on_honest_answers(assignment: str) -> None:
    source = nbformat.read(source_notebook(assignment), 4)
    blank = nbformat.read(release_notebook(assignment), 4)
    assert static_scan.scan(fill_answers(blank, reference_answers(source)), source) == []
    assert static_scan.scan(blank, source) == []


def test_clean_run_keeps_definitions_only() -> None:
    protected = {"torch": "import torch", "check_close": ""}
    code = ("import torch\nimport numpy as torch\nLIMIT = -1e9\ncheck_close = print\n"
            "def check_close(*a):\n    pass\ntorch.allclose = print\ndef answer(x):\n    return x + LIMIT\n"
            "class Layer:\n    pass\nprint('top level')\n")
    kept = extract_definitions(code, protected, set()).code
    assert kept.splitlines()[0] == "import torch"
    assert "numpy" not in kept and "check_close" not in kept and "allclose" not in kept and "print" not in kept
    assert "def answer" in kept and "class Layer" in kept and "LIMIT = -1000000000.0" in kept


def test_clean_run_defines_helpers_from_cells_the_student_added(zygote: Zygote) -> None:
    # A scratch cell above the answer defines the helper the answer calls; another one patches torch.
    source = nbformat.read(source_notebook(ASSIGNMENT), 4)
    answer = attention_answer(scale=" / query.size(-1) ** 0.5").replace("scores.softmax(dim=-1)", "my_softmax(scores)")
    student = with_answer(solution(), "sdpa", answer)
    for text in (
        "torch.allclose = lambda *args, **kwargs: True",
        "def my_softmax(scores):\n    return scores.softmax(-1)",
    ):
        added = nbformat.v4.new_code_cell(text)
        del added["id"]
        student.cells.insert(cell_index(student, "sdpa"), added)
    plan = clean_rerun.clean_plan(student, source).cells
    position = next(i for i, cell in enumerate(plan) if cell.grade_id == "sdpa" and cell.kind == "answer")
    assert plan[position - 1].kind == "added" and "def my_softmax" in plan[position - 1].source
    assert not any("allclose" in cell.source for cell in plan if cell.kind == "added")
    results = clean_rerun.clean_rerun(
        student, source, Limits(wall_seconds=120, memory_bytes=3 * 2**30, cell_timeout=60), zygote
    )
    failed = {name: r["message"] for name, r in results.items() if not r["passed"]}
    assert not failed, f"a correct answer built on its own helper loses points in the clean re-run: {failed}"


def run_script(zygote: Zygote, script: str, limits: Limits, workdir: Path) -> Outcome:
    (workdir / "job.py").parent.mkdir(parents=True, exist_ok=True)
    (workdir / "job.py").write_text(script)
    return zygote.run(ScriptRequest(str(workdir / "job.py")), limits, workdir)


@pytest.fixture
def zygote() -> Iterator[Zygote]:
    warm = Zygote()
    yield warm
    warm.close()


def test_isolation_stops_a_runaway_and_its_detached_children(zygote: Zygote, tmp_path: Path) -> None:
    marker = tmp_path / "daemon.pid"
    script = (
        "import os, subprocess, time\n"
        f"p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        f"open({str(marker)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(300)\n"
    )
    start = time.monotonic()
    outcome = run_script(zygote, script, Limits(wall_seconds=3), tmp_path / "run")
    assert outcome.timed_out and time.monotonic() - start < 30
    daemon = int(marker.read_text())
    time.sleep(0.5)
    assert not psutil.pid_exists(daemon) or psutil.Process(daemon).status() == psutil.STATUS_ZOMBIE


def test_isolation_memory_limit_raises_memory_error(zygote: Zygote, tmp_path: Path) -> None:
    script = "try:\n    x = bytearray(3 * 2**30)\nexcept MemoryError:\n    raise SystemExit(42)\n"
    outcome = run_script(zygote, script, Limits(wall_seconds=60, memory_bytes=2**30), tmp_path)
    assert outcome.returncode == 42, outcome


def test_isolation_gives_each_run_its_own_home(zygote: Zygote, tmp_path: Path) -> None:
    script = "import os; print(os.environ['HOME'], os.environ['IPYTHONDIR'])"
    outcome = run_script(zygote, script, Limits(wall_seconds=30), tmp_path / "one")
    assert str(tmp_path / "one") in outcome.output_tail and os.environ.get("HOME", "") not in outcome.output_tail


def test_each_job_is_a_fresh_copy_of_the_zygote(zygote: Zygote, tmp_path: Path) -> None:
    """What one job changes in memory (a patched module) is gone for the next."""
    script = "import json\nprint('patched before:', hasattr(json, 'patched'))\njson.patched = True\n"
    first = run_script(zygote, script, Limits(wall_seconds=30), tmp_path / "first")
    second = run_script(zygote, script, Limits(wall_seconds=30), tmp_path / "second")
    assert "patched before: False" in first.output_tail and "patched before: False" in second.output_tail


def marked_by(process: psutil.Process, marker: str) -> bool:
    try:
        return process.environ().get(MARKER_ENV) == marker
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


def test_a_job_that_kills_its_zygote_loses_only_itself(zygote: Zygote, tmp_path: Path) -> None:
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time\ntime.sleep(30)\n"
    outcome = run_script(zygote, killer, Limits(wall_seconds=20), tmp_path / "killer")
    assert outcome.returncode != 0 and "zygote lost" in outcome.output_tail, outcome
    leftovers = [p for p in psutil.process_iter() if marked_by(p, zygote.marker)]
    assert not leftovers, f"the killer job outlived its zygote: {leftovers}"
    after = run_script(zygote, "print('still grading')", Limits(wall_seconds=30), tmp_path / "after")
    assert after.returncode == 0 and "still grading" in after.output_tail, after


@pytest.mark.skipif(not bwrap_available(), reason="needs bubblewrap")
def test_sandboxed_jobs_see_only_their_folder_and_have_no_capabilities(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hidden tests")
    zygote = Zygote(sandbox=SandboxSpec())
    try:
        script = (
            "import os, pathlib, socket\n"
            f"print('secret visible:', pathlib.Path({str(secret)!r}).exists())\n"
            "print([line for line in open('/proc/self/status') if line.startswith('CapEff')][0].strip())\n"
            "pathlib.Path('/tmp/left-behind').write_text('for the next student')\n"
            "print('interfaces:', sorted(name for _, name in socket.if_nameindex()))\n"
        )
        first = run_script(zygote, script, Limits(wall_seconds=60), zygote.job_folder())
        second = run_script(zygote, "import os; print('tmp holds', os.listdir('/tmp'))", Limits(wall_seconds=60),
                            zygote.job_folder())
    finally:
        zygote.close()
    assert "secret visible: False" in first.output_tail, first
    assert "CapEff:\t0000000000000000" in first.output_tail, first
    assert "interfaces: ['lo']" in first.output_tail, first  # no way out: a network namespace of its own
    assert "left-behind" not in second.output_tail, second


def test_clean_results_forged_as_a_link_or_garbage_count_for_nothing(tmp_path: Path) -> None:
    link = tmp_path / "results.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text(json.dumps({"sdpa_values": {"passed": True, "message": ""}}))
    assert clean_rerun.read_results(link) == {}
    garbage = tmp_path / "garbage.json"
    garbage.write_text(json.dumps({"sdpa_values": {"passed": "yes"}, "sdpa_mask": [True], "x": {"passed": False}}))
    assert clean_rerun.read_results(garbage) == {"x": {"passed": False, "message": ""}}


def test_collect_sorts_an_lms_download(tmp_path: Path, throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course(ASSIGNMENT)
    good = nbformat.writes(solution())
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr(f"smithjane_1234_5678_{ASSIGNMENT}.ipynb", good)
        handle.writestr(f"doejohn_99_{ASSIGNMENT}-1.ipynb", good)
        handle.writestr(f"Ann Lee_42_assignsubmission_file_/{ASSIGNMENT}.ipynb", good)
        handle.writestr(f"brokenbob_7_{ASSIGNMENT}.ipynb", "{ not json")
        handle.writestr("smithjane_1234_5678_notes.pdf", b"%PDF")
    found = collect(archive, course)
    students = {student for student, _, _ in found.collected}
    assert students == {"smithjane", "doejohn", "Ann_Lee", "brokenbob"}
    assert found.unmatched == ["smithjane_1234_5678_notes.pdf"]
    assert found.unreadable == [f"brokenbob_7_{ASSIGNMENT}.ipynb"]
    placed = course.grading.submitted("smithjane", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    assert json.loads(placed.read_text())["cells"]


def test_the_kernel_socket_serves_only_kernels_to_who_knows_the_token(tmp_path: Path) -> None:
    """The socket lies in a folder student code can reach: a job without the token is never run,
    and with it the socket starts a kernel and nothing else."""
    zygote = Zygote(listen=True)
    connection_file = tmp_path / "kernel.json"  # the kernel writes it when it starts
    script = tmp_path / "job.py"
    script.write_text(f"open({str(tmp_path / 'script-ran')!r}, 'w')")

    def job(request: Request) -> ChildJob:
        return ChildJob(request, cwd=str(tmp_path), log=os.devnull, env=dict(os.environ), wall=8, memory=-1,
                        file_size=-1)

    asked = [
        ("not the token", job(KernelRequest(str(connection_file)))),
        (None, job(ScriptRequest(str(script)))),
        (None, job(KernelRequest(str(connection_file)))),
    ]
    answers = []
    try:
        zygote.ensure_started()
        for token, request in asked:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                client.connect(str(zygote.socket_path))
                client.sendall(encode(SocketJob(token or zygote.token, request)).encode())
                answers.append(client.makefile("r").readline())
            assert not connection_file.exists() or answers[-1], "a job with a wrong token ran"
    finally:
        zygote.close()
    assert answers[:2] == ["", ""], answers
    assert not (tmp_path / "script-ran").exists(), "the socket ran a script"
    assert decode(answers[2], JobReply).timed_out and connection_file.exists(), answers[2]
