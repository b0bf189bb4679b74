"""Each student's own cgroup (version 1): one memory, one CPU and one process-count limit on their server and
all it starts.

On a machine without systemd as PID 1 (these containers), the hub, as root, makes ``tfcourse-students/<user>`` under
its own cgroup in the ``memory``, ``cpu`` and ``pids`` hierarchies, writes the limits there, and puts the student's
server in it before the server runs (:class:`classroom.spawner.LimitedSpawner`); kernels and their children inherit
it. What each limit does when passed, and who may read whose folder: docs/running-a-class.md (Idle culling and each
student's memory). The kernel counts each out-of-memory kill in the cgroup's ``memory.oom_control``
(``oom_kill``, Linux 4.13 and later). Nothing here imports JupyterHub: a student's kernel reads its own cgroup
with it too (:mod:`classroom.oom_notice`).
"""

import grp
import os
import pwd
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_V1 = Path("/sys/fs/cgroup")
GROUP = "tfcourse-students"
CFS_PERIOD_US = 100_000  # the kernel's default scheduling period; the quota is a share of it
CONTROLLERS = ("memory", "cpu", "pids")


def own_cgroup(controller: str, pid: int | str = "self") -> str | None:
    """The cgroup ``pid`` belongs to in ``controller``'s version-1 hierarchy (``/`` for the root); None without one."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return None


def oom_kills(memory_cgroup: Path) -> int:
    """How many processes the out-of-memory killer stopped in this memory cgroup (0 where it is gone)."""
    try:
        control = (memory_cgroup / "memory.oom_control").read_text()
    except OSError:
        return 0
    counts = dict(line.split() for line in control.splitlines() if len(line.split()) == 2)
    return int(counts.get("oom_kill", 0))


@dataclass(frozen=True)
class StudentCgroups:
    """The folder that holds the students' cgroups (or a service's: ``group``), in the memory, cpu and pids
    hierarchies."""

    memory: Path
    cpu: Path
    pids: Path

    @classmethod
    def under_this_process(cls, group: str = GROUP) -> "StudentCgroups":
        """Beneath the cgroups this process (the hub) runs in: what limits the hub also limits its students."""
        folders = {}
        for controller in CONTROLLERS:
            path = own_cgroup(controller) or "/"
            folders[controller] = CGROUP_V1 / controller / path.lstrip("/") / group
        return cls(**folders)

    def folders(self) -> tuple[Path, Path, Path]:
        return self.memory, self.cpu, self.pids

    def unavailable(self) -> str | None:
        """Why limits cannot be set here (None when they can): the folders are made, as a start would."""
        controls = (self.memory.parent / "memory.limit_in_bytes", self.cpu.parent / "cpu.cfs_quota_us",
                    self.pids.parent / "cgroup.procs")
        for control in controls:
            if not control.exists():
                return (
                    f"no cgroup v1 controller file {control} (this machine has cgroup v2 only, or none mounted); "
                    "where systemd runs, give each student a systemd unit instead (SystemdSpawner, "
                    "docs/running-a-class.md)"
                )
        for folder in self.folders():
            try:
                folder.mkdir(exist_ok=True)
            except OSError as error:
                return f"cannot make {folder} ({error.strerror}): the hub must run as root with cgroups mounted rw"
        return None

    def of(self, user: str) -> tuple[Path, Path, Path]:
        """The user's memory, cpu and pids cgroup folders."""
        return self.memory / user, self.cpu / user, self.pids / user

    def prepare(self, user: str, memory_bytes: int | None, cpus: float | None, tasks: int | None = None) -> None:
        """The user's cgroups, with their limits (None: no limit of that kind; ``tasks``: processes and threads),
        readable by the user's own group alone (root's only where the user has no group of their own)."""
        account = pwd.getpwnam(user)
        own_group = grp.getgrgid(account.pw_gid).gr_name == user  # useradd --user-group's, nobody else's
        for parent, folder in zip(self.folders(), self.of(user), strict=True):
            folder.mkdir(parents=True, exist_ok=True)
            parent.chmod(0o711)
            os.chown(folder, 0, account.pw_gid if own_group else 0)
            folder.chmod(0o750 if own_group else 0o700)
        memory, cpu, pids = self.of(user)
        limit = str(memory_bytes) if memory_bytes else "-1"
        swap = memory / "memory.memsw.limit_in_bytes"  # present where swap is accounted: no swap past the limit
        # memsw may never be below the memory limit: raise the one that stays above first.
        order = ("memory.limit_in_bytes", swap.name) if memory_bytes else (swap.name, "memory.limit_in_bytes")
        for name in order:
            if (memory / name).exists():
                (memory / name).write_text(limit)
        (cpu / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
        (cpu / "cpu.cfs_quota_us").write_text(str(round(cpus * CFS_PERIOD_US)) if cpus else "-1")
        (pids / "pids.max").write_text(str(tasks) if tasks else "max")

    def let_join(self, user: str) -> None:
        """Let ``user``'s own processes move themselves into the user's cgroups (a service that the hub starts as
        its account, :mod:`classroom.ngshare_service`); its limits stay root's."""
        uid = pwd.getpwnam(user).pw_uid
        for folder in self.of(user):
            os.chown(folder / "cgroup.procs", uid, 0)

    def join(self, user: str, pid: int) -> None:
        """Move ``pid`` into the user's cgroups (what it starts afterwards is born there)."""
        for folder in self.of(user):
            (folder / "cgroup.procs").write_text(str(pid))

    def processes(self, user: str) -> list[int]:
        try:
            return [int(pid) for pid in (self.of(user)[0] / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def remove(self, user: str, grace: float = 5.0) -> list[int]:
        """End what is left of the user's processes (a kernel the stopped server left behind) and remove
        their cgroups, and the students' folder once empty; the pids that had to be killed."""
        left = self.processes(user)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while self.processes(user) and time.monotonic() < deadline:
            time.sleep(0.1)
        for folder in (*self.of(user), *self.folders()):
            try:
                folder.rmdir()
            except OSError:  # gone already, another student's still there, or a process not yet reaped
                pass
        return left
