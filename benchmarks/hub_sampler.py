"""What a class costs the machine while it works: memory (machine-wide and the students' own) and CPU-seconds.

Every ``every`` seconds :class:`Sampler` reads ``/proc/meminfo`` (MemAvailable: what the machine
could still give) and every process of the students' accounts (their servers, kernels and the
validations' kernels): the sum of their resident memory, and each process's CPU time (user + system),
kept at its highest reading so that a process that ends between two readings keeps what it used up to
the last one. The hub's own processes (the hub, its proxy, its services: root's, below the hub) are
counted apart.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

import psutil


def mem_available() -> int:
    """MemAvailable, bytes: the memory the machine could still give without swapping."""
    with open("/proc/meminfo") as handle:
        for line in handle:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/meminfo has no MemAvailable line (a kernel older than 3.14?)")


def mem_total() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


@dataclass
class Sampler:
    """Samples while :meth:`run` runs (a task); the figures are read after."""

    uids: set[int]  # the students' accounts
    hub_pid: int | None = None
    every: float = 1.0
    lowest_available: int = field(default_factory=mem_available)
    peak_students_rss: int = 0
    students_cpu: dict[int, float] = field(default_factory=dict)  # pid -> its highest CPU time read
    hub_cpu: dict[int, float] = field(default_factory=dict)
    peak_hub_rss: int = 0  # the hub, its proxy and its services (root's processes below the hub)
    samples: int = 0
    started_cpu: dict[int, float] = field(default_factory=dict)  # pid -> its CPU time when sampling began

    def __post_init__(self) -> None:
        """What the processes running already (an earlier level's servers) had used: not this level's."""
        self.sample()
        self.started_cpu, self.hub_started_cpu = dict(self.students_cpu), dict(self.hub_cpu)

    def sample(self) -> None:
        self.lowest_available = min(self.lowest_available, mem_available())
        rss = 0
        for process in psutil.process_iter(["uids", "memory_info", "cpu_times"]):
            info = process.info
            if not info["uids"] or info["uids"].real not in self.uids or info["cpu_times"] is None:
                continue
            rss += info["memory_info"].rss
            times = info["cpu_times"]
            self.students_cpu[process.pid] = max(self.students_cpu.get(process.pid, 0.0), times.user + times.system)
        self.peak_students_rss = max(self.peak_students_rss, rss)
        if self.hub_pid:
            self.sample_hub()
        self.samples += 1

    def sample_hub(self) -> None:
        try:
            hub = psutil.Process(self.hub_pid)
            processes = [hub, *(child for child in hub.children(recursive=True) if child.uids().real == 0)]
        except psutil.NoSuchProcess:
            return
        rss = 0
        for process in processes:
            try:
                times, rss = process.cpu_times(), rss + process.memory_info().rss
            except psutil.NoSuchProcess:
                continue
            self.hub_cpu[process.pid] = max(self.hub_cpu.get(process.pid, 0.0), times.user + times.system)
        self.peak_hub_rss = max(self.peak_hub_rss, rss)

    async def run(self) -> None:
        while True:
            await asyncio.to_thread(self.sample)
            await asyncio.sleep(self.every)

    @property
    def students_cpu_seconds(self) -> float:
        return sum(seconds - self.started_cpu.get(pid, 0.0) for pid, seconds in self.students_cpu.items())

    @property
    def hub_cpu_seconds(self) -> float:
        return sum(seconds - self.hub_started_cpu.get(pid, 0.0) for pid, seconds in self.hub_cpu.items())


def students_processes(uids: set[int]) -> tuple[int, int]:
    """How many processes the students' accounts run now, and their resident memory (bytes)."""
    count = rss = 0
    for process in psutil.process_iter(["uids", "memory_info"]):
        if process.info["uids"] and process.info["uids"].real in uids and process.info["memory_info"]:
            count += 1
            rss += process.info["memory_info"].rss
    return count, rss
