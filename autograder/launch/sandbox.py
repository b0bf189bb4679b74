"""A filesystem and process sandbox for student code, with bubblewrap (``bwrap``) when installed.

The grader's zygotes (:mod:`autograder.launch.zygote`), and so every kernel and clean re-run they fork, live in
such a sandbox; what a process sees and cannot do there: docs/maintainers.md (The sandbox). Without ``bwrap``
grading still works, with only the limits of :mod:`autograder.launch.limits`; ``grade`` then says so.
"""

import os
import shutil
import sys
from pathlib import Path

from autograder.course.settings import DATA_DIRECTORY, REPO_ROOT


def bwrap_available() -> bool:
    return shutil.which("bwrap") is not None


def readable_defaults() -> list[Path]:
    """What Python needs: the interpreter's prefixes, the course's helper package and the data it reads.

    ``tfcourse.agnews`` finds the committed AG News sample (and a ``make data`` download) beside
    the package, not in the course folder being graded, which may be another folder (``--root``).
    """
    paths = {Path(sys.prefix), Path(sys.base_prefix), REPO_ROOT / "tfcourse", REPO_ROOT / DATA_DIRECTORY}
    return sorted(path for path in paths if path.exists())


def sandbox_command(command: list[str], writable: list[Path], readable: list[Path] = ()) -> list[str]:
    """``command`` wrapped in bwrap; ``writable`` folders are bound read-write, the first is the cwd."""
    argv = ["bwrap", "--die-with-parent", "--new-session"]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    # Run as root, bwrap would keep every capability inside: enough to mount the host's disk.
    argv += ["--cap-drop", "ALL", "--unshare-net"]
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
    if writable:
        argv += ["--chdir", str(writable[0])]
    return [*argv, "--", *command]
