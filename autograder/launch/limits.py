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

from traitlets.config import Config

from autograder.course.settings import REPO_ROOT, CourseSettings, GradeSettings  # REPO_ROOT: autograder/, tfcourse/

OUTPUT_TAIL_BYTES = 8000


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. ``memory_bytes`` caps the address space of each process. The defaults are those
    :class:`GradeSettings` and :class:`CourseSettings` declare; :meth:`configured` reads a course's."""

    wall_seconds: float = GradeSettings.wall_seconds.default_value
    memory_bytes: int = int(GradeSettings.memory_gib.default_value * 2**30)
    file_bytes: int = 512 * 2**20
    cell_timeout: int = CourseSettings.cell_timeout.default_value
    threads: int | None = None  # OMP/MKL threads per process; None leaves the libraries' default
    reference_factor: float = GradeSettings.reference_factor.default_value  # a cell's limit: this times the reference's
    reference_margin: float = GradeSettings.reference_margin.default_value  # time, plus this

    @classmethod
    def configured(cls, config: Config) -> "Limits":
        """The limits ``config`` (:func:`autograder.course.settings.load_config`) sets."""
        grade, course = GradeSettings(config=config), CourseSettings(config=config)
        return cls(grade.wall_seconds, int(grade.memory_gib * 2**30), cell_timeout=course.cell_timeout,
                   reference_factor=grade.reference_factor, reference_margin=grade.reference_margin)


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
