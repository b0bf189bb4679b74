"""The grader's side of a zygote (:mod:`autograder.isolated.zygote_server`): start it, send jobs, read answers.

:class:`Zygote` starts the zygote process (inside :mod:`autograder.launch.sandbox` when
asked), sends it jobs, waits for the answers, and restarts a zygote that died or hangs. A
job that kills its zygote only ends its own job as crashed; the next job starts a new
zygote, and the processes the lost zygote no longer supervises are found by the marker
every one of them carries in its environment (``MARKER_ENV``) and killed.
"""

import os
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

from autograder.course.settings import REPO_ROOT
from autograder.isolated.protocol import ChildJob, JobReply, ProtocolError, Ready, Request, decode, encode
from autograder.isolated.zygote_server import MARKER_ENV, TIMED_OUT
from autograder.launch.limits import Limits, Outcome, private_environment, read_tail
from autograder.launch.sandbox import sandbox_command

REPLY_GRACE_SECONDS = 60  # beyond the job's own limit, before the zygote counts as hung


def kill_marked(marker: str) -> None:
    """Kill every process whose starting environment carries ``marker``: what a lost zygote left behind."""
    for _ in range(3):  # a process may fork while we kill; go round until nothing is left
        marked = []
        for process in psutil.process_iter():
            try:
                if process.pid != os.getpid() and process.environ().get(MARKER_ENV) == marker:
                    process.kill()
                    marked.append(process)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        if not marked:
            return
        psutil.wait_procs(marked, timeout=5)


@dataclass(frozen=True)
class SandboxSpec:
    """The bubblewrap sandbox a zygote and its jobs live in (see :func:`autograder.launch.sandbox.sandbox_command`)."""

    readable: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()  # besides the zygote's own scratch


class Zygote:
    """The grader's handle on one zygote process; jobs run one at a time.

    ``scratch`` is the zygote's own writable folder: a job's folder must lie inside it (it is
    the only folder a sandboxed zygote can write). A zygote that dies or does not answer in
    time is killed and replaced by a new one at the next job. With ``listen`` it also takes
    jobs from other processes (kernel stubs) on the Unix socket ``socket_path``, from a client
    that knows ``token``.
    """

    def __init__(self, preload: tuple[str, ...] = (), sandbox: SandboxSpec | None = None, listen: bool = False) -> None:
        self.preload = preload
        self.sandbox = sandbox
        self.listen = listen
        self.scratch = Path(tempfile.mkdtemp(prefix="zygote-")).resolve()
        self.socket_path = self.scratch / "zygote.sock"  # renamed at every start
        self.token = ""
        self.marker = uuid.uuid4().hex
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        command = [sys.executable, "-m", "autograder.isolated.zygote_server", "--preload", *self.preload]
        if self.listen:
            command += ["--listen", str(self.socket_path)]
        if self.sandbox is None:
            return command
        writable = [self.scratch, *self.sandbox.writable]
        command += ["--scrub", "/tmp", "/dev/shm", "--keep", *map(str, writable)]
        readable = [REPO_ROOT / "autograder", *self.sandbox.readable]
        return sandbox_command(command, writable, readable)

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the zygote process without waiting for it to be ready (see :func:`start_together`)."""
        # A new socket name for every start: a job may have left anything at the old one.
        self.socket_path = self.scratch / f"zygote-{uuid.uuid4().hex[:8]}.sock"
        env = {**private_environment(self.scratch / "zygote-home"), MARKER_ENV: self.marker}
        self.process = subprocess.Popen(
            self.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=self.scratch, env=env, text=True, start_new_session=True,
        )
        if self.listen:
            self.token = secrets.token_hex(16)
            assert self.process.stdin is not None
            self.process.stdin.write(self.token + "\n")
            self.process.stdin.flush()

    def wait_ready(self) -> None:
        """Wait until the launched zygote has imported its preloads and says it is ready."""
        if self.read_reply(Ready, timeout=300) is None:
            self.stop()
            raise RuntimeError(f"the zygote {self.command()} did not start")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ensure_started(self) -> None:
        """Start the zygote, or a new one if the last died (a job may kill it)."""
        if not self.running:
            self.stop()
            self.start()

    def read_reply(self, expected: type[Ready] | type[JobReply], timeout: float) -> Ready | JobReply | None:
        """The zygote's next answer, or None when it sent none in time (or something else)."""
        assert self.process is not None and self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        try:
            return decode(line, expected) if line else None
        except ProtocolError:
            return None

    def job_folder(self) -> Path:
        """A new empty folder for one job, inside the zygote's scratch."""
        folder = self.scratch / uuid.uuid4().hex
        folder.mkdir()
        return folder

    def run(self, request: Request, limits: Limits, workdir: Path) -> Outcome:
        """Run ``request`` in a fresh child, in ``workdir`` under ``limits``.

        The child's output goes to ``workdir/output.log``; the int the request's ``run`` returns is its exit code.
        """
        self.ensure_started()
        assert self.process is not None and self.process.stdin is not None
        workdir.mkdir(parents=True, exist_ok=True)
        log = workdir / "output.log"
        job = ChildJob(
            request, cwd=str(workdir), log=str(log),
            env={**private_environment(workdir / "home", limits.threads), MARKER_ENV: self.marker},
            wall=limits.wall_seconds, memory=limits.memory_bytes, file_size=limits.file_bytes, threads=limits.threads,
        )
        start = time.monotonic()
        try:
            self.process.stdin.write(encode(job))
            self.process.stdin.flush()
            reply = self.read_reply(JobReply, timeout=limits.wall_seconds + REPLY_GRACE_SECONDS)
        except (BrokenPipeError, ValueError):
            reply = None
        if reply is None:  # the zygote died (a job killed it) or hangs: the job gets nothing
            self.stop()
            seconds = time.monotonic() - start
            timed_out = seconds >= limits.wall_seconds
            return Outcome(TIMED_OUT if timed_out else 137, timed_out, seconds, read_tail(log) + "\n[zygote lost]")
        return Outcome(reply.returncode, reply.timed_out, reply.seconds, read_tail(log))

    def stop(self) -> None:
        """Kill the zygote and every process under it, and whatever its jobs left once it was gone."""
        if self.process is None:
            return
        try:
            processes = [psutil.Process(self.process.pid), *psutil.Process(self.process.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            processes = []
        for process in processes:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        self.process.wait()
        self.process = None
        kill_marked(self.marker)  # orphans: a job whose zygote was killed is no longer below it

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)


def start_together(zygotes: Iterable[Zygote]) -> None:
    """Start the zygotes that are not running, side by side: their imports overlap on the cores."""
    launched = []
    for zygote in zygotes:
        if not zygote.running:
            zygote.stop()
            zygote.launch()
            launched.append(zygote)
    for zygote in launched:
        zygote.wait_ready()
