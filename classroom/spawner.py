"""The hub's spawner when per-student limits are on (:mod:`classroom.limits`): each student in their own cgroups."""

import asyncio
import os
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from jupyterhub.traitlets import ByteSpecification
from traitlets import Instance, Integer, Unicode, default

from classroom.cgroups import StudentCgroups, oom_kills
from classroom.home_disks import HomeDisks


class LimitedSpawner(LocalProcessSpawner):
    """LocalProcessSpawner that runs each limited server (``mem_limit``, ``cpu_limit``, ``tasks_limit`` or
    ``disk_limit`` set) in its user's own cgroups, on a home of its own size where ``disk_limit`` is set, and logs
    each out-of-memory kill there in the hub's log."""

    cgroups = Instance(StudentCgroups)
    tasks_limit = Integer(
        None, allow_none=True, config=True, help="Processes and threads a user's server may run at once, all its "
        "kernels' included (systemd's TasksMax); past it the user's next fork fails. None: no limit."
    )
    disk_limit = ByteSpecification(
        None, allow_none=True, config=True, help="The size of a user's home, a filesystem of its own "
        "(classroom/home_disks.py): past it their writes there fail (No space left on device). None: no limit."
    )
    home_images = Unicode("", config=True, help="The folder of the users' home images (with disk_limit).")

    @default("cgroups")
    def _default_cgroups(self) -> StudentCgroups:
        return StudentCgroups.under_this_process()

    @default("poll_interval")
    def _default_poll_interval(self) -> int:
        return 10  # each poll also reads the cgroup's kill count: the hub's log says why within 10 s

    oom_kills_logged = 0

    @property
    def limited(self) -> bool:
        return bool(self.mem_limit or self.cpu_limit or self.tasks_limit or self.disk_limit)

    async def start(self) -> tuple[str, int]:
        if self.limited:
            self.cgroups.prepare(self.user.name, self.mem_limit, self.cpu_limit, self.tasks_limit)
            self.oom_kills_logged = oom_kills(self.cgroups.of(self.user.name)[0])
            if self.disk_limit:
                await asyncio.to_thread(HomeDisks(Path(self.home_images)).ensure, self.user.name, self.disk_limit)
            self.log.info("%s's server runs with %s", self.user.name, self.limits_text())
        return await super().start()

    def limits_text(self) -> str:
        memory = f"{self.mem_limit / 2**30:.1f} GiB of memory" if self.mem_limit else "no memory limit"
        cpu = f"{self.cpu_limit:g} CPU" if self.cpu_limit else "no CPU limit"
        tasks = f"{self.tasks_limit} processes and threads" if self.tasks_limit else "no process limit"
        disk = f"a home of {self.disk_limit / 2**30:.1f} GiB" if self.disk_limit else "no disk limit"
        return f"{memory}, {cpu}, {tasks}, {disk}"

    def make_preexec_fn(self, name: str):
        """Join the user's cgroups in the new process, as root, before it becomes the user and runs the server."""
        become_user = super().make_preexec_fn(name)
        if not self.limited:
            return become_user
        cgroups = self.cgroups

        def preexec() -> None:
            cgroups.join(name, os.getpid())
            become_user()

        return preexec

    async def poll(self) -> int | None:
        status = await super().poll()
        if self.limited:
            self.log_oom_kills()
        return status

    def log_oom_kills(self) -> None:
        kills = oom_kills(self.cgroups.of(self.user.name)[0])
        if kills > self.oom_kills_logged:
            self.log.warning(
                "%s's processes went past their memory limit (%s): the machine stopped %d of them (out of memory; "
                "%d since their server started). Their notebook says so on its next cell.",
                self.user.name, self.limits_text(), kills - self.oom_kills_logged, kills,
            )
            self.oom_kills_logged = kills

    async def stop(self, now: bool = False) -> None:
        await super().stop(now=now)
        if self.limited:
            self.log_oom_kills()
            killed = await asyncio.to_thread(self.cgroups.remove, self.user.name)  # waits for the kills
            if killed:
                self.log.info("%s's server left %d process(es) running: ended them", self.user.name, len(killed))
