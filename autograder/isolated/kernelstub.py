"""A kernel forked from a warm zygote, and the stub that stands for it in jupyter_client.

jupyter_client starts a kernel as a child process it can poll, signal and kill. Here that
child is this stub (``python -I -S kernelstub.py LAUNCH``, where LAUNCH is an encoded
:class:`~autograder.isolated.protocol.StubLaunch`; standard library only, so it starts in
milliseconds): it asks the kernel zygote (:mod:`autograder.launch.zygote`, which has ipykernel
and the notebook's modules loaded, inside the sandbox) to fork a kernel in the working folder it
is given (not nbgrader's folder, which holds the autograded notebook with its hidden tests), with
the stub's environment and resource limits, relays the signals it gets (an interrupt on a cell
timeout), and exits with the kernel's exit code. When the stub is killed, the zygote sees the
connection close and kills the kernel.
"""

import os
import resource
import signal
import socket
import sys
from pathlib import Path

if __name__ == "__main__":  # started with -I -S: only the standard library, and this package for its protocol
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from autograder.isolated.protocol import (
    ChildJob,
    JobReply,
    KernelRequest,
    ProtocolError,
    RelaySignal,
    SocketJob,
    StubLaunch,
    decode,
    encode,
)

# The kernel keeps its input history (the hidden tests it ran, among others) in memory, never in a file it could read.
KERNEL_ARGUMENTS = ("--HistoryManager.hist_file=:memory:",)
NO_WALL_LIMIT = 7 * 24 * 3600.0  # the grader's per-submission limit kills the stub, and so the kernel


def start_kernel(connection_file: str) -> None:
    """A :class:`KernelRequest` run by the zygote's child: an IPython kernel on the channels of ``connection_file``."""
    from ipykernel import kernelapp  # preloaded in the zygote; the stub must not import it

    restyle_preloaded_course()
    kernelapp.launch_new_instance(argv=["-f", connection_file, *KERNEL_ARGUMENTS])


def restyle_preloaded_course() -> None:
    """Apply the course's figure style again, for this kernel's edition.

    The zygote imported :mod:`tfcourse` (which applies its style on import) before any kernel's
    environment named an edition; a Chinese submission's kernel needs the Chinese font before its
    first figure.
    """
    style = sys.modules.get("tfcourse.style")
    if style is not None:
        style.apply_course_style()


def kernel_job(launch: StubLaunch) -> ChildJob:
    """The zygote job for the kernel ``launch`` asks for, with the environment and limits of this stub."""
    env = dict(os.environ)
    env.pop("JPY_PARENT_PID", None)  # a PID outside the sandbox
    threads = env.get("OMP_NUM_THREADS", "")
    return ChildJob(
        KernelRequest(launch.connection_file),
        cwd=launch.working_folder,
        log=launch.log,
        env=env,
        wall=NO_WALL_LIMIT,
        memory=resource.getrlimit(resource.RLIMIT_AS)[0],
        file_size=resource.getrlimit(resource.RLIMIT_FSIZE)[0],
        threads=int(threads) if threads.isdigit() else None,
    )


def main() -> None:
    launch = decode(sys.argv[1], StubLaunch)
    job = kernel_job(launch)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(launch.zygote_socket)
        connection.sendall(encode(SocketJob(launch.token, job)).encode())

        def relay(signum: int, frame: object) -> None:
            connection.sendall(encode(RelaySignal(signum)).encode())

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, relay)
        reply = connection.makefile("r").readline()
    try:
        sys.exit(decode(reply, JobReply).returncode)
    except ProtocolError:
        sys.exit(1)


if __name__ == "__main__":
    main()
