"""A filesystem and process sandbox for student code, with bubblewrap (``bwrap``) when installed.

Inside the sandbox a process sees the system's programs and libraries, the Python
environment and the course's helper package, all read-only, and one writable folder
(the notebook's own). It does not see the repository (``solutions/``), the gradebook, the
other submissions or the course copy's gradebook; it has its own process namespace,
so it cannot signal the grader, and no capabilities, even when the grader runs as root.
Without ``bwrap`` grading still works, with only the limits of :mod:`autograder.isolation`;
``grade`` then says so.
"""

import os
import shutil
import sys
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from autograder.isolation import PACKAGE_ROOT

WRITABLE_ENV = "AUTOGRADER_SANDBOX_WRITABLE"
READABLE_ENV = "AUTOGRADER_SANDBOX_READABLE"


def bwrap_available() -> bool:
    return shutil.which("bwrap") is not None


def readable_defaults() -> list[Path]:
    """What Python needs: the interpreter's prefixes and the course's helper package."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), PACKAGE_ROOT / "tfcourse"}
    return sorted(path for path in paths if path.exists())


def sandbox_command(
    command: list[str], writable: list[Path], readable: list[Path] = (), network: bool = True
) -> list[str]:
    """``command`` wrapped in bwrap; ``writable`` folders are bound read-write, the first is the cwd."""
    # jupyter_client interrupts a kernel with SIGINT to its process group, bwrap included, and
    # bwrap would die of it. Started with SIGINT ignored, bwrap survives; the kernel installs
    # its own SIGINT handler while it runs a cell, so the interrupt still stops the cell.
    argv = ["env", "--ignore-signal=INT", "bwrap", "--die-with-parent"]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    # Run as root, bwrap would keep every capability inside: enough to mount the host's disk.
    argv += ["--cap-drop", "ALL"]
    if not network:
        argv.append("--unshare-net")
    for folder in ("/usr", "/etc"):
        argv += ["--ro-bind", folder, folder]
    for link in ("bin", "lib", "lib64", "sbin"):
        if Path("/", link).is_symlink():
            argv += ["--symlink", os.readlink(Path("/", link)), f"/{link}"]
        elif Path("/", link).exists():
            argv += ["--ro-bind", f"/{link}", f"/{link}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
    for path in [*readable_defaults(), *readable]:
        argv += ["--ro-bind", str(path), str(path)]
    for path in writable:
        argv += ["--bind", str(path), str(path)]
    for name in ("HOME", "IPYTHONDIR", "MPLCONFIGDIR", "TMPDIR", "JUPYTER_DATA_DIR"):
        argv += ["--setenv", name, "/tmp"]
    # ipykernel watches the PID in JPY_PARENT_PID, which means nothing in the new PID namespace;
    # --die-with-parent does that job.
    argv += ["--unsetenv", "JPY_PARENT_PID"]
    if writable:
        argv += ["--chdir", str(writable[0])]
    return [*argv, "--", *command]


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernels run inside :func:`sandbox_command`.

    The writable folder (the notebook's folder in the course copy) and any extra readable
    paths come from the environment, set by :mod:`autograder.autograde_child`; the
    connection file's folder is readable. The kernel keeps the network: it talks to nbgrader
    over loopback TCP (IPC sockets did not connect across the sandbox here).
    """

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        writable = [Path(p) for p in os.environ.get(WRITABLE_ENV, "").split(os.pathsep) if p]
        readable = [Path(p) for p in os.environ.get(READABLE_ENV, "").split(os.pathsep) if p]
        readable.append(Path(self.connection_file).resolve().parent)
        return sandbox_command(command, writable, readable)
