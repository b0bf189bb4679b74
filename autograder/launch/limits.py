"""Limits for untrusted code, and the environment it starts with.

Student code runs in a child of a zygote (:mod:`autograder.isolated.zygote_server`), which
applies :class:`Limits` (address space, file size, no core dumps, wall clock) and kills every
descendant of the job when it ends. :func:`private_environment` gives each job a private
``HOME`` and ``TMPDIR``: nothing, such as IPython startup files or matplotlib caches, carries
over to the next submission.
"""

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.course.settings import CELL_TIMEOUT_SECONDS, REPO_ROOT  # the checkout: autograder/ and tfcourse/

OUTPUT_TAIL_BYTES = 8000


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. ``memory_bytes`` caps the address space of each process."""

    wall_seconds: float = 900.0
    memory_bytes: int = 4 * 2**30
    file_bytes: int = 512 * 2**20
    cell_timeout: int = CELL_TIMEOUT_SECONDS
    threads: int | None = None  # OMP/MKL threads per process; None leaves the libraries' default


@dataclass(frozen=True)
class Outcome:
    returncode: int
    timed_out: bool
    seconds: float
    output_tail: str  # the end of the command's stdout and stderr


def private_environment(home: Path, threads: int | None = None) -> dict[str, str]:
    """The environment for untrusted code: the caller's, with every per-user folder moved into ``home``.

    ``threads`` caps the math libraries' thread pools, so that parallel jobs do not oversubscribe the cores.
    """
    env = dict(os.environ)
    # Children import this very copy of the grader and the helper package, whatever an editable
    # install elsewhere in the environment points to.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    for name in ("HOME", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "MPLCONFIGDIR", "TMPDIR"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["MPLBACKEND"] = "Agg"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def read_tail(path: Path, size: int = OUTPUT_TAIL_BYTES) -> str:
    if not path.exists():
        return ""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - size))
        return handle.read().decode(errors="replace")
