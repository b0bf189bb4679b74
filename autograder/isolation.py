"""Run an untrusted command under limits, and leave nothing of it behind.

``run_limited`` starts this module as a small supervisor process
(``python -m autograder.isolation``). The supervisor

* makes itself a child subreaper, so that every process the command leaves behind
  (a Jupyter kernel runs in its own session; a student can fork a daemon) is re-parented
  to it instead of to init, and can be found and killed;
* starts the command with an address-space limit (``RLIMIT_AS``), a file-size limit and
  no core dumps, in a private ``HOME``/``TMPDIR`` so that nothing (IPython startup
  files, matplotlib caches) carries over to the next submission;
* kills the command and all its descendants once the wall-clock limit is reached, and
  in any case kills the descendants still alive when the command ends.

The supervisor runs no untrusted code itself, so it can enforce the limits.
"""

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # holds autograder/ and tfcourse/
TIMED_OUT = 124
PR_SET_CHILD_SUBREAPER = 36
OUTPUT_TAIL_BYTES = 8000


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. ``memory_bytes`` caps the address space of each process."""

    wall_seconds: float = 900.0
    memory_bytes: int = 4 * 2**30
    file_bytes: int = 512 * 2**20
    cell_timeout: int = 120
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
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH", "")]))
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    for name in ("HOME", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "MPLCONFIGDIR", "TMPDIR"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["MPLBACKEND"] = "Agg"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_limited(argv: list[str], limits: Limits, workdir: Path) -> Outcome:
    """Run ``argv`` in ``workdir`` under ``limits``; its output goes to ``workdir/output.log``."""
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "output.log"
    supervisor = [
        sys.executable, "-m", "autograder.isolation",
        "--wall", str(limits.wall_seconds),
        "--memory", str(limits.memory_bytes),
        "--file-size", str(limits.file_bytes),
        "--log", str(log),
        "--", *argv,
    ]  # fmt: skip
    env = private_environment(workdir / "home", limits.threads)
    start = time.monotonic()
    try:
        # The supervisor enforces the wall limit; this timeout only guards against a stuck supervisor.
        returncode = subprocess.run(
            supervisor, cwd=workdir, env=env, timeout=limits.wall_seconds + 60
        ).returncode
    except subprocess.TimeoutExpired:
        returncode = TIMED_OUT
    seconds = time.monotonic() - start
    return Outcome(returncode, returncode == TIMED_OUT, seconds, read_tail(log))


def read_tail(path: Path, size: int = OUTPUT_TAIL_BYTES) -> str:
    if not path.exists():
        return ""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - size))
        return handle.read().decode(errors="replace")


def kill_descendants() -> None:
    """Kill every process below this one (children, grandchildren, re-parented orphans)."""
    for _ in range(3):  # a process may fork while we kill; go round until nothing is left
        children = psutil.Process().children(recursive=True)
        if not children:
            return
        for child in children:
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(children, timeout=5)


def supervise(argv: list[str], wall: float, memory: int, file_size: int, log: Path) -> int:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    with log.open("wb") as output:
        child = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 preexec_fn=limit)  # fmt: skip
        try:
            returncode = child.wait(timeout=wall)
            # Keep TIMED_OUT unambiguous, and report a signal the way a shell does.
            returncode = (
                128 - returncode if returncode < 0 else (1 if returncode == TIMED_OUT else returncode)
            )
        except subprocess.TimeoutExpired:
            returncode = TIMED_OUT
        kill_descendants()
    return returncode


def main() -> None:
    parser = argparse.ArgumentParser(description="Run a command under limits (used by run_limited).")
    parser.add_argument("--wall", type=float, required=True)
    parser.add_argument("--memory", type=int, required=True)
    parser.add_argument("--file-size", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    sys.exit(supervise(command, args.wall, args.memory, args.file_size, args.log))


if __name__ == "__main__":
    main()
