"""Per-student memory, CPU and process limits on the one-machine hub, without systemd: cgroups
(:mod:`classroom.cgroups`).

The memory and CPU limits are JupyterHub's own ``Spawner.mem_limit`` and ``Spawner.cpu_limit``, the settings The
Littlest JupyterHub gives systemd (``SystemdSpawner``); the process limit is
``LimitedSpawner.tasks_limit`` (systemd's ``TasksMax``). :class:`classroom.spawner.LimitedSpawner` enforces them
with a cgroup per student. ``make hub MEM_LIMIT=2G CPU_LIMIT=1 TASKS_LIMIT=512`` sets them
(``TFCOURSE_HUB_MEM_LIMIT``, ``TFCOURSE_HUB_CPU_LIMIT``, ``TFCOURSE_HUB_TASKS_LIMIT``; 0 turns one off).
Instructors are not limited: they grade the class. The ngshare service has a memory limit of its own
(``TFCOURSE_HUB_NGSHARE_MEM_LIMIT``), in a cgroup of its own.
"""

import os
import sys
from pathlib import Path

from classroom.cgroups import StudentCgroups

# Measured per student (classroom/k8s/peak_memory.json): an idle server 120 MiB, a kernel of
# 01-06 380-660 MiB, 07's 1,200 MiB. 2 GiB holds 07's kernel and the server with ~700 MiB to
# spare: one more notebook of 01-06 open beside it, or the page cache a fetch or submit fills.
DEFAULT_MEM_LIMIT = "2G"
# One core each: a training run's threads (PyTorch starts one per core) slow only their owner.
DEFAULT_CPU_LIMIT = "1"
# Processes and threads together, what a fork bomb multiplies. Measured (docs/running-a-class.md): a server 3, a kernel
# that ran PyTorch 15 on 2 cores, one more a further core: four kernels on 64 cores hold about 320.
DEFAULT_TASKS_LIMIT = "512"
# The ngshare service: tornado holds each upload's body in memory (up to 100 MiB each, many at once) and ngshare
# decodes it; past this the kernel stops ngshare, never the machine, and the hub starts it again.
DEFAULT_NGSHARE_MEM_LIMIT = "1G"
# Each student's home a filesystem of this size (classroom/home_disks.py); off unless make hub's DISK_LIMIT sets it:
# per-user quotas, where the machine has them, bound /tmp and the exchange too (docs/running-a-class.md, Disk).
DEFAULT_DISK_LIMIT = "0"
SERVICES = "tfcourse-services"  # the hub's services' own cgroups, beside the students'
SERVICE_CGROUPS = "TFCOURSE_SERVICE_CGROUPS"  # the cgroup.procs files a service's launcher moves itself into


def setting(environ: dict[str, str], name: str, default: str) -> str | None:
    """``TFCOURSE_HUB_<name>`` or its default; None where it is 0 or empty (no limit of that kind)."""
    value = environ.get(f"TFCOURSE_HUB_{name}", default).strip()
    return None if value in ("", "0") else value


def configure_limits(c, environ: dict[str, str] = os.environ, home_images: Path | None = None) -> str:
    """Set the hub's spawner and its limits from the environment (the home images in ``home_images``); the line
    the hub logs about them."""
    memory = setting(environ, "MEM_LIMIT", DEFAULT_MEM_LIMIT)
    cpus = setting(environ, "CPU_LIMIT", DEFAULT_CPU_LIMIT)
    tasks = setting(environ, "TASKS_LIMIT", DEFAULT_TASKS_LIMIT)
    disk = setting(environ, "DISK_LIMIT", DEFAULT_DISK_LIMIT) if home_images else None
    if memory is None and cpus is None and tasks is None and disk is None:
        return "per-student limits are off: TFCOURSE_HUB_MEM_LIMIT, _CPU_LIMIT, _TASKS_LIMIT and _DISK_LIMIT are 0"
    cgroups = StudentCgroups.under_this_process()
    why_not = cgroups.unavailable()
    if why_not:
        return f"per-student limits are off: {why_not}"
    c.JupyterHub.spawner_class = "classroom.spawner.LimitedSpawner"
    c.Spawner.mem_limit = memory
    c.Spawner.cpu_limit = None if cpus is None else float(cpus)
    c.LimitedSpawner.tasks_limit = None if tasks is None else int(tasks)
    if disk is not None:
        c.LimitedSpawner.disk_limit = disk
        c.LimitedSpawner.home_images = str(home_images)
    return (f"per-student limits: memory {memory or 'unlimited'}, CPU {cpus or 'unlimited'}, "
            f"{tasks or 'unlimited'} processes and threads (cgroups under {cgroups.memory.parent}), "
            + (f"a home of {disk} each (images in {home_images})" if disk else "homes not limited"))  # fmt: skip


def confine_service(user: str, environ: dict[str, str] = os.environ) -> tuple[dict[str, str], str]:
    """A cgroup of its own, with ngshare's memory limit, for a service the hub runs as ``user``: the environment
    that tells its launcher to move itself in, and the line the hub logs about it."""
    from jupyterhub.traitlets import ByteSpecification  # the hub's own reading of "1G", as for mem_limit

    memory = setting(environ, "NGSHARE_MEM_LIMIT", DEFAULT_NGSHARE_MEM_LIMIT)
    if memory is None:
        return {}, f"{user}'s memory is not limited: TFCOURSE_HUB_NGSHARE_MEM_LIMIT is 0"
    cgroups = StudentCgroups.under_this_process(SERVICES)
    why_not = cgroups.unavailable()
    if why_not:
        return {}, f"{user}'s memory is not limited: {why_not}"
    cgroups.prepare(user, ByteSpecification().validate(None, memory), None)
    cgroups.let_join(user)
    procs = " ".join(str(folder / "cgroup.procs") for folder in cgroups.of(user))
    return {SERVICE_CGROUPS: procs}, f"{user}'s memory limit: {memory} (cgroup {cgroups.of(user)[0]})"


def announce(line: str) -> None:
    """A line in the hub's log at start (its logging is not set up yet while the config file runs)."""
    print(f"[tfcourse] {line}", file=sys.stderr, flush=True)
