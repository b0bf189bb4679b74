"""Per-student memory and CPU limits on the one-machine hub, without systemd: cgroups (:mod:`classroom.cgroups`).

The limits are JupyterHub's own ``Spawner.mem_limit`` and ``Spawner.cpu_limit``, the settings The
Littlest JupyterHub gives systemd (``SystemdSpawner``); here :class:`classroom.spawner.LimitedSpawner`
enforces them with a cgroup per student. ``make hub MEM_LIMIT=2G CPU_LIMIT=1`` sets them (``TFCOURSE_HUB_MEM_LIMIT``,
``TFCOURSE_HUB_CPU_LIMIT``; 0 turns one off). Instructors are not limited: they grade the class.
"""

import os
import sys

from classroom.cgroups import StudentCgroups

# Measured per student (classroom/k8s/peak_memory.json): an idle server 120 MiB, a kernel of
# 01-06 380-660 MiB, 07's 1,200 MiB. 2 GiB holds 07's kernel and the server with ~700 MiB to
# spare: one more notebook of 01-06 open beside it, or the page cache a fetch or submit fills.
DEFAULT_MEM_LIMIT = "2G"
# One core each: a training run's threads (PyTorch starts one per core) slow only their owner.
DEFAULT_CPU_LIMIT = "1"


def configure_limits(c, environ: dict[str, str] = os.environ) -> str:
    """Set the hub's spawner and its limits from the environment; the line the hub logs about them."""
    memory = environ.get("TFCOURSE_HUB_MEM_LIMIT", DEFAULT_MEM_LIMIT).strip()
    cpus = environ.get("TFCOURSE_HUB_CPU_LIMIT", DEFAULT_CPU_LIMIT).strip()
    memory, cpus = (None if value in ("", "0") else value for value in (memory, cpus))
    if memory is None and cpus is None:
        return "per-student limits are off: TFCOURSE_HUB_MEM_LIMIT and TFCOURSE_HUB_CPU_LIMIT are 0"
    cgroups = StudentCgroups.under_this_process()
    why_not = cgroups.unavailable()
    if why_not:
        return f"per-student limits are off: {why_not}"
    c.JupyterHub.spawner_class = "classroom.spawner.LimitedSpawner"
    c.Spawner.mem_limit = memory
    c.Spawner.cpu_limit = None if cpus is None else float(cpus)
    return (f"per-student limits: memory {memory or 'unlimited'}, CPU {cpus or 'unlimited'} "
            f"(cgroups under {cgroups.memory} and {cgroups.cpu})")  # fmt: skip


def announce(line: str) -> None:
    """A line in the hub's log at start (its logging is not set up yet while the config file runs)."""
    print(f"[tfcourse] {line}", file=sys.stderr, flush=True)
