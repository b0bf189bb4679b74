"""A ``grade`` run that is killed leaves nothing running, and temporary folders that the next run removes.

The run's worker processes die with it (``PR_SET_PDEATHSIG``), and their zygotes with them: in
bubblewrap's sandbox, which dies with its worker (``--die-with-parent``), or, without it, by their own
parent-death signal (:mod:`autograder.isolated.zygote_server`); each zygote ends its jobs as it goes.
A killed run cannot remove its temporary folders (the reference answers, each zygote's scratch): they
all lie in one folder of its own, ``autograder-run-*`` in the system's temporary folder, locked
(``flock``) for as long as a process of the run lives. Each run removes the run folders whose lock nobody
holds, its own user's only.
"""

import fcntl
import os
import shutil
import signal
import tempfile
from pathlib import Path

from autograder.isolated.zygote_server import PR_SET_PDEATHSIG, prctl

RUN_PREFIX = "autograder-run-"
LOCK_NAME = ".lock"


class RunFolder:
    """This run's folder for temporary files, locked until :meth:`close` (or the end of every process of the run)."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=RUN_PREFIX))
        self._lock = os.open(self.path / LOCK_NAME, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        os.close(self._lock)


def clear_left_behind() -> list[Path]:
    """Remove the run folders of runs that ended without removing them (no process holds their lock); the removed."""
    cleared = []
    for folder in sorted(Path(tempfile.gettempdir()).glob(f"{RUN_PREFIX}*")):
        if folder.is_symlink() or not folder.is_dir() or folder.lstat().st_uid != os.getuid():
            continue  # not one of this user's runs: the temporary folder is everyone's
        try:
            lock = os.open(folder / LOCK_NAME, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue  # a run making its folder this instant
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a run in progress
        else:
            shutil.rmtree(folder, ignore_errors=True)
            cleared.append(folder)
        finally:
            os.close(lock)
    return cleared


def join_run(run_pid: int, folder: Path) -> None:
    """In each worker process of the run's own pool (its initializer): die with the run, keep temporaries in its
    folder (the zygotes' scratch folders are made there)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != run_pid:  # the run died before the signal was asked for
        os._exit(1)
    tempfile.tempdir = str(folder)
