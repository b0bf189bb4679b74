"""``python -m benchmarks.hub_capacity``: how many students one machine's classroom hub serves, measured.

A ramp of simulated classes (:mod:`benchmarks.hub_student`) on the course's own hub, laid out under ``--prefix`` by
``classroom.provision`` and started on free loopback ports (or a running hub: ``--hub-url`` and ``--token``): at each
level N students, each a real system account, work through the notebooks at once, and N goes up until the 95th
percentile of the ``--stop-on`` notebooks' cell latency, each kernel's first cell left out, passes ``--p95-limit``,
memory falls under ``--memory-floor``, a level fails or ``--max-minutes`` runs out. The method and why:
docs/running-a-class.md ("How many students one machine serves"); each option: ``--help``. Per level, ``--out``
gets a JSON file (every cell's latency, each student's steps) and a row of a markdown table.

Run as root (it makes system users and runs JupyterHub with LocalProcessSpawner).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import pwd
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import psutil

from autograder.course.settings import HubSettings
from benchmarks.hub_class import (
    class_hub,
    extra_config,
    handed_in,
    hub_settings,
    make_students,
    seed_environment,
    student_names,
    teacher_name,
)
from benchmarks.hub_sampler import Sampler, mem_available, mem_total, students_processes
from benchmarks.hub_student import HubStudent, Pace, StudentRecord, answered_notebook
from classroom.layout import HubLayout
from classroom.system_users import remove_user

ASSIGNMENTS = ["01_attention", "06_ag_news_classifier"]
GIB = 2**30
HUB_FLAGS = ("cull_idle", "kernel_cull_idle", "mem_limit", "cpu_limit")


@dataclass
class LevelResult:
    """One level of the ramp: N students at once, what they waited for and what they cost."""

    students: int
    seconds: float
    cells: int
    cells_replied: int
    p50_cell_s: float | None
    p95_cell_s: float | None
    slowest_cell_s: float | None
    p95_by_notebook: dict[str, float]  # after each kernel's first cell (which imports torch): the watched figure
    first_cell_by_notebook: dict[str, float]  # the slowest first cell of each notebook (a kernel's start-up)
    machine_peak_used_gib: float  # MemAvailable at the start minus its lowest during the level
    students_peak_rss_gib: float  # this level's students' processes together (servers, kernels, validations)
    left_running_at_start: int  # the earlier levels' processes still running when this level began
    left_running_rss_gib: float
    students_cpu_s: float
    hub_cpu_s: float
    hub_peak_rss_gib: float
    failures: int
    students_failed: int
    submitted: int  # hand-ins the servers said succeeded
    in_inbound: int  # (student, assignment) pairs found in the exchange's inbound
    stopped: str = ""  # why this level was cut short, if it was
    records: list[dict] = field(default_factory=list)

    @property
    def row(self) -> str:
        def seconds(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f}"

        watched = " / ".join(seconds(value) for value in self.p95_by_notebook.values())
        first = " / ".join(seconds(value) for value in self.first_cell_by_notebook.values())
        return (f"| {self.students} | {seconds(self.p50_cell_s)} | {seconds(self.p95_cell_s)} | {watched} | "
                f"{first} | {seconds(self.slowest_cell_s)} | {self.cells_replied}/{self.cells} | "
                f"{self.machine_peak_used_gib:.1f} | {self.students_peak_rss_gib:.1f} | "
                f"{self.left_running_at_start} ({self.left_running_rss_gib:.1f} GiB) | "
                f"{self.students_cpu_s / max(1, self.students):.0f} | {self.failures} | "
                f"{self.in_inbound}/{self.submitted} | {self.seconds:.0f} |")


TABLE_HEAD = ("| N | p50 cell (s) | p95 cell (s) | p95 after the first cell, by notebook (s) | slowest first cell, "
              "by notebook (s) | slowest cell (s) | cells replied | machine peak used (GiB) | "
              "students' peak RSS (GiB) | left running at start | CPU-s per student | failures | "
              "hand-ins in inbound / submitted | level wall (s) |\n"
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def percentile(values: list[float], fraction: float) -> float | None:
    """The nearest-rank percentile (numpy's inverted_cdf): the smallest value with at least ``fraction`` of the values
    at or below it."""
    return float(np.percentile(values, 100 * fraction, method="inverted_cdf")) if values else None


async def run_level(hub_url: str, token: str, names: list[str], uids: set[int], notebooks: dict, pace: Pace,
                    stagger: float, memory_floor: int, time_limit: float,
                    hub_pid: int | None) -> tuple[list[StudentRecord], Sampler, str]:
    """The students of one level at once (one starting every ``stagger`` s); what they saw, the sampler, and why
    the level was stopped early ("" when it was not)."""
    sampler = Sampler(uids, hub_pid)
    sampling = asyncio.create_task(sampler.run())
    students = [HubStudent(hub_url, token, name, notebooks, pace) for name in names]

    async def arrive(index: int, student: HubStudent) -> StudentRecord:
        await asyncio.sleep(index * stagger)
        return await student.work()

    working = asyncio.gather(*(arrive(index, student) for index, student in enumerate(students)))
    stopped, deadline = "", time.monotonic() + time_limit
    try:
        while not working.done():
            await asyncio.wait([working], timeout=1.0)
            if sampler.lowest_available < memory_floor:
                stopped = f"memory: MemAvailable fell to {sampler.lowest_available / GIB:.1f} GiB"
            elif time.monotonic() > deadline:
                stopped = f"time: the level ran past {time_limit:.0f} s"
            if stopped:
                working.cancel()
                break
        if not stopped:
            await working
    finally:
        sampling.cancel()
        sampler.sample()
    for student in students:
        if stopped and not student.record.submitted:
            student.record.failures.append(f"cut: {stopped}")
    return [student.record for student in students], sampler, stopped


def summarize(names: list[str], records: list[StudentRecord], sampler: Sampler, started_available: int,
              left: tuple[int, int], seconds: float, layout: HubLayout, assignments: list[str],
              stopped: str) -> LevelResult:
    cells = [cell for record in records for cell in record.cells]
    replied = [cell.seconds for cell in cells if cell.status != "no reply"]
    answered = [cell for cell in cells if cell.status != "no reply"]
    by_notebook = {name: percentile([c.seconds for c in answered if c.assignment == name and c.cell > 0], 0.95)
                   for name in assignments}
    first_cells = {name: max((c.seconds for c in answered if c.assignment == name and c.cell == 0), default=None)
                   for name in assignments}
    return LevelResult(
        students=len(names), seconds=round(seconds, 1), cells=len(cells), cells_replied=len(replied),
        p50_cell_s=percentile(replied, 0.5), p95_cell_s=percentile(replied, 0.95),
        slowest_cell_s=max(replied, default=None),
        p95_by_notebook={name: value for name, value in by_notebook.items() if value is not None},
        first_cell_by_notebook={name: value for name, value in first_cells.items() if value is not None},
        machine_peak_used_gib=round((started_available - sampler.lowest_available) / GIB, 2),
        students_peak_rss_gib=round(sampler.peak_students_rss / GIB, 2),
        left_running_at_start=left[0], left_running_rss_gib=round(left[1] / GIB, 2),
        students_cpu_s=round(sampler.students_cpu_seconds, 1), hub_cpu_s=round(sampler.hub_cpu_seconds, 1),
        hub_peak_rss_gib=round(sampler.peak_hub_rss / GIB, 2),
        failures=sum(len(record.failures) for record in records),
        students_failed=sum(1 for record in records if record.failures),
        submitted=sum(len(record.submitted) for record in records),
        in_inbound=sum(1 for name in names for assignment in assignments if handed_in(layout, name, assignment)),
        stopped=stopped, records=[record.as_dict() for record in records],
    )


def why_stop(level: LevelResult, options: argparse.Namespace) -> str:
    """Why the ramp ends after ``level`` ("" to go on)."""
    watched = [level.p95_by_notebook.get(name) for name in options.stop_on if name in level.p95_by_notebook]
    if level.stopped:
        return level.stopped
    if any(value > options.p95_limit for value in watched):
        return f"p95 cell latency of {', '.join(options.stop_on)} (after the first cell) passed {options.p95_limit:g} s"
    if level.students_failed:
        return f"{level.students_failed} of {level.students} students failed"
    return ""


@dataclass
class Ramp:
    """The whole run: its settings, its levels, and where it writes them."""

    settings: dict
    out: Path
    levels: list[LevelResult] = field(default_factory=list)
    ended: str = ""

    def write(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        document = {"settings": self.settings, "ended": self.ended, "levels": [asdict(level) for level in self.levels]}
        (self.out / "hub_capacity.json").write_text(json.dumps(document, indent=1))
        (self.out / "hub_capacity.md").write_text(self.markdown())

    def markdown(self) -> str:
        lines = [f"Hub capacity ramp, {self.settings['started']} UTC on {self.settings['machine']}; "
                 f"{self.settings['label']}.", "", TABLE_HEAD, *(level.row for level in self.levels), "",
                 f"Ended: {self.ended or 'running'}."]
        return "\n".join(lines) + "\n"


def machine() -> str:
    return f"{os.cpu_count()} cores, {mem_total() / GIB:.1f} GiB, {platform.platform()}"


def ramp(options: argparse.Namespace) -> Ramp:
    layout = HubLayout(options.prefix.resolve())
    notebooks = {name: answered_notebook(name) for name in options.notebooks}
    pace = Pace(options.think, options.cells, not options.no_validate, leave_kernel_open=True)
    settings = hub_settings(**{name: getattr(options, name) for name in HUB_FLAGS})
    result = Ramp({"started": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "machine": machine(),
                   "label": options.label or ", ".join(f"{k}={v}" for k, v in settings.items()) or "hub defaults",
                   "hub_settings": settings, "notebooks": options.notebooks, "pace": asdict(pace),
                   "stagger_s": options.stagger, "p95_limit_s": options.p95_limit, "stop_on": options.stop_on},
                  options.out)
    if options.seed_env_from and seed_environment(HubLayout(options.seed_env_from.resolve()), layout):
        print(f"seeded {layout.env} from {options.seed_env_from}", flush=True)
    all_names: list[str] = []
    began = time.monotonic()
    try:
        if options.hub_url:
            result.ended = run_levels(result, options, options.hub_url, options.token, None, layout, notebooks, pace,
                                      all_names, began)
        else:
            log = options.out / "jupyterhub.log"
            options.out.mkdir(parents=True, exist_ok=True)
            extra = extra_config(options.cull_idle)
            with class_hub(layout, teacher_name(options.stem), options.notebooks, log, settings, extra) as hub:
                result.ended = run_levels(result, options, hub.url, hub.token, hub.process.pid, layout, notebooks,
                                          pace, all_names, began)
    finally:
        result.write()
        if not options.keep_users:
            end_students(all_names)
            for name in all_names:
                remove_user(name)
    return result


def run_in_own_loop(coroutine: Coroutine):
    """``asyncio.run`` in a thread of its own: the calling thread may already run a loop (Playwright's sync
    API leaves one in the test worker that drove Chromium before)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def run_levels(result: Ramp, options: argparse.Namespace, hub_url: str, token: str, hub_pid: int | None,
               layout: HubLayout, notebooks: dict, pace: Pace, all_names: list[str], began: float) -> str:
    """The levels, one after another; why the ramp ended."""
    for count in options.students:
        elapsed = time.monotonic() - began
        last = result.levels[-1] if result.levels else None
        expected = last.seconds * count / last.students if last else 0.0  # a level's wall grows with N on 2 cores
        if elapsed + expected > options.max_minutes * 60:
            return f"time: the {count}-student level would not end within --max-minutes {options.max_minutes:g}"
        names = student_names(len(all_names), count, options.stem)
        all_names.extend(names)
        uids = make_students(names)
        earlier = {pwd.getpwnam(name).pw_uid for name in all_names[:-count]}
        left = students_processes(earlier)
        available = mem_available()
        print(f"level {count}: {left[0]} processes of earlier students running ({left[1] / GIB:.1f} GiB); "
              f"MemAvailable {available / GIB:.1f} GiB", flush=True)
        started = time.monotonic()
        remaining = options.max_minutes * 60 - (started - began)
        records, sampler, stopped = run_in_own_loop(run_level(
            hub_url, token, names, uids, notebooks, pace, options.stagger, int(options.memory_floor * GIB),
            remaining, hub_pid))
        level = summarize(names, records, sampler, available, left, time.monotonic() - started, layout,
                          list(notebooks), stopped)
        result.levels.append(level)
        result.write()
        print(level.row, flush=True)
        reason = why_stop(level, options)
        if reason:
            return reason
        if options.between:
            time.sleep(options.between)
    return "every level asked for ran"


def end_students(names: list[str]) -> None:
    """End what the students' accounts still run (the hub stopped their servers; a kernel may outlive one)."""
    uids = set()
    for name in names:
        try:
            uids.add(pwd.getpwnam(name).pw_uid)
        except KeyError:
            continue
    leftovers = [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real in uids]
    for process in leftovers:
        process.terminate()
    psutil.wait_procs(leftovers, timeout=10)
    for process in leftovers:
        if process.is_running():
            process.kill()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hub_capacity", description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=lambda text: [int(n) for n in text.split(",")],
                        default=[2, 4, 8, 16, 32, 64], help="the ramp's levels (default 2,4,8,16,32,64)")
    parser.add_argument(
        "--notebooks",
        type=lambda text: text.split(","),
        default=ASSIGNMENTS,
        help=f"the assignments each student works through (default {','.join(ASSIGNMENTS)})",
    )
    parser.add_argument("--think", type=float, default=3.0, help="mean seconds between two cells (default 3)")
    parser.add_argument("--cells", type=int, default=None, help="only the first CELLS code cells of each notebook")
    parser.add_argument("--no-validate", action="store_true", help="submit without validating first")
    parser.add_argument("--stagger", type=float, default=1.0, help="seconds between two students' arrivals (1)")
    parser.add_argument("--p95-limit", type=float, default=2.0, help="the p95 cell latency that ends the ramp (2 s)")
    parser.add_argument("--stop-on", type=lambda text: text.split(","), default=["01_attention"],
                        help="the notebooks whose p95 is watched (default 01_attention: its cells are all "
                             "interactive; 06's training cells take seconds even alone)")
    parser.add_argument(
        "--memory-floor", type=float, default=2.0, help="GiB of MemAvailable under which a level is stopped (default 2)"
    )
    parser.add_argument("--max-minutes", type=float, default=60.0, help="the whole ramp's time (default 60)")
    parser.add_argument("--between", type=float, default=0.0, help="seconds to wait between levels (culling acts)")
    for name in HUB_FLAGS:  # the hub's settings for this run (default: the hub's own)
        trait = HubSettings.class_traits()[name]
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(trait.default_value),
                            help=f"HubSettings.{name}: {trait.help} (default {trait.default_value})")
    parser.add_argument(
        "--prefix",
        type=Path,
        default=Path("/srv/tfcourse-cap"),
        help="the hub's layout (default /srv/tfcourse-cap, laid out anew; with --hub-url: that hub's)",
    )
    parser.add_argument("--seed-env-from", type=Path, help="copy this prefix's hub environment when --prefix has none")
    parser.add_argument("--hub-url", help="a running hub instead of a new one (its instructor released the notebooks)")
    parser.add_argument("--token", help="with --hub-url: a token with admin:users, admin:servers, access:servers")
    parser.add_argument("--stem", default="tfcap", help="the students' names: STEM-000, STEM-001, ... (tfcap)")
    parser.add_argument("--keep-users", action="store_true", help="leave the students' accounts after the run")
    parser.add_argument("--label", default="", help="a name for this run in the report")
    parser.add_argument("--out", type=Path, default=Path("build/hub-capacity"), help="where the JSON and table go")
    options = parser.parse_args(argv)
    if options.hub_url and not options.token:
        parser.error("--hub-url needs --token")
    return options


def main(argv: list[str] | None = None) -> Ramp:
    if os.geteuid() != 0:
        raise SystemExit("benchmarks.hub_capacity makes system users and runs JupyterHub as root: run it as root")
    result = ramp(parse(argv))
    print(result.markdown())
    return result


if __name__ == "__main__":
    main()
