"""Per-student memory, CPU and process limits on the one-machine hub, without systemd: cgroups
(:mod:`classroom.cgroups`).

The memory and CPU limits are JupyterHub's own ``Spawner.mem_limit`` and ``Spawner.cpu_limit``, the settings The
Littlest JupyterHub gives systemd (``SystemdSpawner``); the process limit is
``LimitedSpawner.tasks_limit`` (systemd's ``TasksMax``). :class:`classroom.spawner.LimitedSpawner` enforces them
with a cgroup per student. ``HubSettings`` (autograder/course/settings.py) declares them: ``make hub MEM_LIMIT=2G
CPU_LIMIT=1 TASKS_LIMIT=512`` sets them (0 turns one off). Instructors are not limited: they grade the class. The
ngshare service has a memory limit of its own (``HubSettings.ngshare_mem_limit``), in a cgroup of its own.
Why the defaults are what they are: docs/running-a-class.md.
"""

import sys
from pathlib import Path

from autograder.course.settings import HubSettings
from classroom.cgroups import StudentCgroups

SERVICES = "tfcourse-services"  # the hub's services' own cgroups, beside the students'
SERVICE_CGROUPS = "TFCOURSE_SERVICE_CGROUPS"  # the cgroup.procs files a service's launcher moves itself into


def setting(value: str) -> str | None:
    """None where a limit is 0 or empty (no limit of that kind)."""
    return None if value.strip() in ("", "0") else value.strip()


def configure_limits(c, hub: HubSettings, home_images: Path | None = None) -> str:
    """Set the hub's spawner and its limits from ``hub`` (the home images in ``home_images``); the line the hub logs
    about them."""
    memory, cpus, tasks = setting(hub.mem_limit), setting(hub.cpu_limit), setting(hub.tasks_limit)
    disk = setting(hub.disk_limit) if home_images else None
    if memory is None and cpus is None and tasks is None and disk is None:
        return "per-student limits are off: HubSettings.mem_limit, cpu_limit, tasks_limit and disk_limit are 0"
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
            + (f"a home of {disk} each (images in {home_images})" if disk else "homes not limited"))


def confine_service(user: str, hub: HubSettings) -> tuple[dict[str, str], str]:
    """A cgroup of its own, with ngshare's memory limit, for a service the hub runs as ``user``: the environment
    that tells its launcher to move itself in, and the line the hub logs about it."""
    from jupyterhub.traitlets import ByteSpecification  # the hub's own reading of "1G", as for mem_limit

    memory = setting(hub.ngshare_mem_limit)
    if memory is None:
        return {}, f"{user}'s memory is not limited: HubSettings.ngshare_mem_limit is 0"
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
