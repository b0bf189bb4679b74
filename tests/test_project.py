"""Project hygiene: one set of pins for pip and conda, what the install removes, and ruff-clean Python."""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from autograder.course.settings import REPO_ROOT


def pins(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        match = re.fullmatch(r"\s*-?\s*([A-Za-z0-9_.\-]+)==([^\s#]+)\s*(#.*)?", line)
        if match:
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def test_environment_yml_has_the_same_pins_as_requirements():
    requirements = pins((REPO_ROOT / "requirements.txt").read_text().splitlines())
    environment = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert requirements and pins(pip_section) == requirements


def test_requirements_agree_with_the_lock():
    lock = pins((REPO_ROOT / "requirements-lock.txt").read_text().splitlines())
    for name, version in pins((REPO_ROOT / "requirements.txt").read_text().splitlines()).items():
        assert lock.get(name) == version, f"{name}: requirements.txt says {version}, the lock {lock.get(name)}"


def test_what_the_install_removes_is_absent_and_nbformat_starts_quickly():
    removed = [line.strip() for line in (REPO_ROOT / "requirements-removed.txt").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    for name in removed:
        with pytest.raises(importlib.metadata.PackageNotFoundError):
            importlib.metadata.distribution(name)
    code = "import sys, nbformat; print(sorted(m for m in sys.modules if m.startswith(('rfc3987', 'lark'))))"
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "[]", f"importing nbformat still loads {imported.strip()}"


def test_python_code_is_ruff_clean():
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", str(REPO_ROOT)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ci_has_the_grading_sandbox():
    # `make test` installs bubblewrap when run as root (CI); without it the sandbox tests skip.
    if not os.environ.get("CI"):
        pytest.skip("only CI must have bubblewrap; see `make sandbox`")
    assert shutil.which("bwrap"), "bubblewrap is missing in CI: the grader's sandbox tests would be skipped"


def test_tests_sharing_a_costly_fixture_run_as_one_unit_of_work():
    from tests.conftest import work_unit  # the suite's own scheduling

    variant = "tests/test_variants.py::test_variant[05_encoder_decoder:greedy-mutant-no_eos]"
    graded = "tests/test_autograde.py::test_untouched_release_scores_zero[05_encoder_decoder]"
    assert work_unit(variant) == work_unit(graded) == "notebook:05_encoder_decoder"
    every = "tests/grader/test_every_notebook.py::test_the_export_gives_a_reason_for_every_lost_point"
    assert work_unit(f"{every}[01_attention]") != work_unit(f"{every}[02_multi_head_attention]")
    book = "tests/test_book.py::test_every_page_links_its_student_notebook"
    assert work_unit(f"{book}[01_attention]") == work_unit(f"{book}[06_ag_news_classifier]")
    flow = "tests/browser/test_student_flow.py::test_filled_copy_runs_and_shows_every_figure"
    notebooks = ("01_attention", "04_encoder", "05_encoder_decoder", "07_language_model")
    assert len({work_unit(f"{flow}[{a}]") for a in notebooks}) == 2
    alone = "tests/test_agnews.py::test_loader_reads_both_csv_forms"
    assert work_unit(alone) == alone


class StandInWorker:
    """What the scheduler reads of an xdist worker: its gateway's id; what it sends is dropped."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indexes: list[int]) -> None:
        pass


def test_at_most_two_workers_take_the_waiting_units_while_other_work_remains(pytestconfig, monkeypatch):
    import xdist.scheduler.loadscope

    from tests.conftest import SLEEPER_LANES, GroupScheduling, is_sleeper

    monkeypatch.setattr(xdist.scheduler.loadscope, "parse_tx_spec_config", lambda config: ["popen"] * 4)

    every = "tests/grader/test_every_notebook.py::test_the_export_gives_a_reason_for_every_lost_point"
    waiting = [f"{every}[{a}]" for a in ("01_attention", "04_encoder", "05_encoder_decoder", "07_language_model")]
    busy = [f"tests/test_agnews.py::test_{n}" for n in range(6)]
    scheduler = GroupScheduling(pytestconfig)
    for nodeid in busy + waiting:
        scheduler.workqueue[scheduler._split_scope(nodeid)] = {nodeid: False}
    taken: dict[str, list[str]] = {}
    nodes = [StandInWorker(f"gw{n}") for n in range(4)]
    scheduler.registered_collections = {node: busy + waiting for node in nodes}
    for _ in range(2):  # two rounds, as xdist starts each worker with two units
        for node in nodes:
            scheduler._assign_work_unit(node)
            taken.setdefault(node.gateway.id, []).append(next(reversed(scheduler.assigned_work[node])))
    lanes = {worker for worker, units in taken.items() if any(map(is_sleeper, units))}
    assert len(lanes) == SLEEPER_LANES and all(all(map(is_sleeper, taken[worker])) for worker in lanes), taken
    assert taken["gw0"][0].endswith("07_language_model"), taken  # the longest first


def test_a_worker_keeps_one_grading_pool_per_job_count_until_other_notebooks_are_graded():
    from tests.support import grading_pool

    try:
        first = grading_pool.pool_for(1, ("01_attention",))
        assert grading_pool.pool_for(1, ("01_attention",)) is first  # the seed's zygotes serve the class
        assert grading_pool.pool_for(2, ("01_attention",)) is not first  # two jobs: a pool of two processes
        replaced = grading_pool.pool_for(1, ("04_encoder",))
        assert replaced is not first
        with pytest.raises(RuntimeError, match="shutdown"):  # one notebook set kept: the other pool ended
            first.submit(int)
    finally:
        grading_pool.shut_down()


@pytest.mark.slow  # starts the fork server (its Python imports the grader): seconds
def test_a_kept_grading_pool_holds_no_copy_of_the_test_worker_s_pipes():
    from tests.support import grading_pool

    read, write = os.pipe()  # as Playwright's pipe to its driver: the driver must see it close
    try:
        pid = grading_pool.pool_for(1, ("01_attention",)).submit(os.getpid).result(timeout=120)
        held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        assert os.readlink(f"/proc/self/fd/{write}") not in held, held
    finally:
        grading_pool.shut_down()
        os.close(read)
        os.close(write)
