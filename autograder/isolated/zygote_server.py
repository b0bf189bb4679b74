"""The zygote itself: a warm process that forks one fresh, limited child per job.

Starting Python and importing nbgrader or torch costs seconds, which a grader that starts
new interpreters for every submission pays again and again. A zygote
(``python -m autograder.isolated.zygote_server --preload MODULE ...``) imports those modules
once, then, for each job it reads on standard input (or, with ``--listen``, on a Unix socket
from a kernel stub that knows the token), forks a child that takes the job's folder,
environment and limits and calls the job's function. The child is a copy of a process that
never ran a job, so nothing one submission does reaches the next through memory.

The zygote supervises each child: it is the child subreaper of everything the job starts
(a Jupyter kernel in its own session, a daemon a student forks), stops the job at its wall
clock limit, kills every descendant when the job ends, empties the ``--scrub`` folders
(the sandbox's ``/tmp``), and only then answers with one JSON line on standard output.
The zygote runs no untrusted code itself and cannot be read or traced by its children
(it is not dumpable). The grader's side, which starts it and sends the jobs, is
:mod:`autograder.launch.zygote`. This module imports nothing of the grader's: it runs inside
the sandbox, with only the standard library, psutil and the protocol
(:mod:`autograder.isolated.protocol`), in which every job, reply and socket request is spelled.
"""

import argparse
import ctypes
import importlib
import os
import resource
import secrets
import select
import shutil
import signal
import socket
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import psutil

from autograder.isolated.protocol import (
    ChildJob,
    JobReply,
    KernelRequest,
    ProtocolError,
    Ready,
    RelaySignal,
    SocketJob,
    decode,
    encode,
)

TIMED_OUT = 124  # the exit code of a job stopped at its wall-clock limit

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
RELAYED_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGKILL}
# Every process of one zygote (the zygote, its jobs, what they fork or start) carries this variable
# with the zygote's own value: /proc/PID/environ keeps it even after a job clears os.environ.
MARKER_ENV = "AUTOGRADER_ZYGOTE"


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


def prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def exit_code(status: int) -> int:
    """A child's wait status as a shell reports it (128 + signal); TIMED_OUT stays unambiguous."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        return 128 - code
    return 1 if code == TIMED_OUT else code


@dataclass(frozen=True)
class Scrub:
    """Folders emptied after every job (a sandbox's /tmp), and the folders inside them to keep."""

    folders: list[Path]
    keep: list[Path]


def run_child(job: ChildJob, log_fd: int, inherited: list[int]) -> None:
    """In the forked child: take the job's folder, environment and limits, call its function, exit.

    ``inherited`` are the zygote's own descriptors (answers, sockets), closed before the job runs.
    """
    code = 1
    try:
        for fd in inherited:
            os.close(fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.setsid()
        prctl(PR_SET_DUMPABLE, 1)  # the job's own memory is its own business
        os.chdir(job.cwd)
        os.environ.clear()
        os.environ.update(job.env)
        memory, file_size = job.memory, job.file_size
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if job.threads and "torch" in sys.modules:  # preloaded before the job's OMP_NUM_THREADS was known
            sys.modules["torch"].set_num_threads(job.threads)
        code = job.request.run()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:  # whatever the job raised, the child reports it and exits
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # a closed stream must not keep the child alive
                pass
        os._exit(code)


def relay(control: socket.socket, pid: int) -> bool:
    """Pass the signals the job's requester sends (:class:`RelaySignal` lines) to the job; False once it hung up."""
    data = control.recv(4096)
    for line in data.decode(errors="replace").splitlines():
        try:
            signum = decode(line, RelaySignal).signum
        except ProtocolError:
            continue
        if signum in RELAYED_SIGNALS:
            try:
                os.killpg(pid, signum)
            except ProcessLookupError:
                pass
    return bool(data)


def run_job(job: ChildJob, inherited: list[int], scrub: Scrub, control: socket.socket | None = None) -> JobReply:
    """Fork the job's child, wait for it under the wall-clock limit, clean up after it.

    With ``control`` (the connection the job came on), signals read there go to the job, and
    the job is killed when the requester hangs up.
    """
    start = time.monotonic()
    try:
        log_fd = os.open(job.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError:
        log_fd = os.open(os.devnull, os.O_WRONLY)
    pid = os.fork()
    if pid == 0:
        run_child(job, log_fd, inherited)
    os.close(log_fd)
    pidfd = os.pidfd_open(pid)
    deadline = start + job.wall
    watched = [pidfd] + ([control] if control else [])
    timed_out = ended = hung_up = False
    while not (ended or hung_up or timed_out):
        ready, _, _ = select.select(watched, [], [], max(0.0, deadline - time.monotonic()))
        ended = pidfd in ready
        hung_up = control in ready and not ended and not relay(control, pid)
        timed_out = not ready
    os.close(pidfd)
    if not ended:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    kill_descendants()
    for folder in scrub.folders:
        empty(folder, scrub.keep)
    returncode = TIMED_OUT if timed_out else exit_code(status)
    return JobReply(returncode, timed_out, time.monotonic() - start)


def stop_now(signum: int, frame: object) -> None:
    kill_descendants()
    os._exit(1)


def empty(folder: Path, keep: list[Path]) -> None:
    """Remove what a job left in ``folder`` (the sandbox's /tmp), as far as it can be removed.

    The folders bound into the sandbox (``keep``: the scratch folders, which may lie below /tmp) stay.
    """
    for path in folder.iterdir():
        if any(path == kept or path in kept.parents for kept in keep):
            continue
        try:
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        except OSError:
            continue


def serve_connection(server: socket.socket, token: str, own: list[int], scrub: Scrub) -> None:
    """One job from a client of the socket (a kernel stub): checked against the token, answered there.

    Only a kernel may be asked for there (:class:`KernelRequest`).
    """
    connection, _ = server.accept()
    with connection:
        connection.settimeout(10)
        try:
            request = decode(connection.makefile("r").readline(), SocketJob)
        except (OSError, ProtocolError):
            return
        if not secrets.compare_digest(str(request.token), token) or not isinstance(request.job.request, KernelRequest):
            return
        connection.settimeout(None)
        try:
            reply = run_job(request.job, [*own, connection.fileno()], scrub, connection)
        except (TypeError, ValueError, OSError) as error:  # a malformed job fails alone
            reply = JobReply(1, False, 0.0, error=repr(error))
        try:
            connection.sendall(encode(reply).encode())
        except OSError:
            pass


def serve(preload: list[str], scrub: Scrub, listen: Path | None) -> None:
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_DUMPABLE, 0)  # children (student code) cannot read or trace the zygote's memory
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # the grader's worker is gone: stop
    signal.signal(signal.SIGTERM, stop_now)
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # whatever a preloaded module prints cannot garble the answers
    requests = os.fdopen(os.dup(0), "r")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    token = requests.readline().strip() if listen else ""  # on stdin: no other process can read it
    server = None
    if listen:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(listen))
        server.listen(4)
    own = [reply_fd, requests.fileno()] + ([server.fileno()] if server else [])
    for name in preload:
        module = importlib.import_module(name)
        if callable(getattr(module, "warm_up", None)):  # a preloaded module may prepare what every job needs
            try:
                module.warm_up()
            except Exception:  # a warm-up that fails only leaves the jobs as cold as without it
                traceback.print_exc()
    replies = os.fdopen(reply_fd, "w")
    replies.write(encode(Ready()))
    replies.flush()
    while True:
        ready, _, _ = select.select([requests] + ([server] if server else []), [], [])
        if server in ready:
            serve_connection(server, token, own, scrub)
        if requests in ready:
            line = requests.readline()
            if not line:
                break
            replies.write(encode(run_job(decode(line, ChildJob), own, scrub)))
            replies.flush()
    kill_descendants()


def main() -> None:
    parser = argparse.ArgumentParser(description="Fork a fresh, limited child per job read on stdin.")
    parser.add_argument("--preload", nargs="*", default=[], help="modules to import once, before any job")
    parser.add_argument("--scrub", nargs="*", type=Path, default=[], help="folders emptied after every job")
    parser.add_argument("--keep", nargs="*", type=Path, default=[], help="folders the scrub leaves alone")
    parser.add_argument("--listen", type=Path, help="also take jobs on this Unix socket (token first on stdin)")
    args = parser.parse_args()
    serve(args.preload, Scrub(args.scrub, args.keep), args.listen)


if __name__ == "__main__":
    main()
