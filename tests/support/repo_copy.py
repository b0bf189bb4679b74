"""A temporary copy of the repository for tests that change it (a new notebook, a new edition), with this
session's virtualenv: the copy runs its own code, and ``make`` reuses the venv (``VENV=`` on its command line)."""

import shutil
import subprocess
import sys
from pathlib import Path

from autograder.course.settings import REPO_ROOT

VENV = Path(sys.executable).parents[1]
LEFT_OUT = shutil.ignore_patterns(".venv", "node_modules", "build", ".git", "grading", "__pycache__", "*.egg-info")


def repo_copy(folder: Path) -> Path:
    copy = folder / "repo"
    shutil.copytree(REPO_ROOT, copy, ignore=LEFT_OUT, symlinks=True)
    return copy


def run(copy: Path, *command: str, timeout: float = 900) -> str:
    """Run ``command`` in the copy (``python`` is this venv's); its output, or an assertion naming the failure."""
    argv = [sys.executable, *command[1:]] if command[0] == "python" else list(command)
    done = subprocess.run(argv, cwd=copy, capture_output=True, text=True, timeout=timeout)
    said = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{' '.join(command)}: exit {done.returncode}\n{said}"
    return done.stdout + done.stderr


def make(copy: Path, target: str, timeout: float = 900) -> str:
    """``make target`` in the copy with this venv, never installing into it (``-o``: its stamp counts as done, even
    where a requirements file is newer), since an install from the copy would point the venv at the copy."""
    return run(copy, "make", "-o", str(VENV / ".installed"), target, f"VENV={VENV}", timeout=timeout)
