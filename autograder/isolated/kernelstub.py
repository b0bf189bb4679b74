"""A kernel forked from a warm zygote, and the stub that stands for it in jupyter_client.

jupyter_client starts a kernel as a child process it can poll, signal and kill. Here that
child is this stub (``python -I -S kernelstub.py SOCKET TOKEN CONNECTION_FILE FOLDER``, standard
library only, so it starts in milliseconds): it asks the kernel zygote
(:mod:`autograder.launch.zygote`, which has ipykernel and the notebook's modules loaded, inside
the sandbox) to fork a kernel in the working folder it is given (not nbgrader's folder,
which holds the autograded notebook with its hidden tests), with the stub's environment and
resource limits, relays the signals it gets (an interrupt on a cell timeout), and exits
with the kernel's exit code. When the stub is killed, the zygote sees the connection close
and kills the kernel.
"""

import json
import os
import resource
import signal
import socket
import sys

KERNEL_LOG_ENV = "AUTOGRADER_KERNEL_LOG"  # where the kernel's own stdout and stderr go
SOCKET_ENV, TOKEN_ENV = "AUTOGRADER_KERNEL_SOCKET", "AUTOGRADER_KERNEL_TOKEN"  # for nbgrader's side, not the kernel's
# The kernel keeps its input history (the hidden tests it ran, among others) in memory, never in a file it could read.
KERNEL_ARGUMENTS = ("--HistoryManager.hist_file=:memory:",)
NO_WALL_LIMIT = 7 * 24 * 3600.0  # the grader's per-submission limit kills the stub, and so the kernel


def start_kernel(connection_file: str) -> None:
    """The job the zygote's child runs: an IPython kernel on the ports of ``connection_file``."""
    from ipykernel import kernelapp  # noqa: PLC0415 (preloaded in the zygote; the stub must not import it)

    kernelapp.launch_new_instance(argv=["-f", connection_file, *KERNEL_ARGUMENTS])


def kernel_job(connection_file: str, working_folder: str) -> dict:
    """The zygote job for a kernel that starts in ``working_folder``, with the environment and limits of this stub."""
    env = dict(os.environ)
    for name in ("JPY_PARENT_PID", SOCKET_ENV, TOKEN_ENV):  # a PID outside the sandbox; the zygote's key
        env.pop(name, None)
    threads = env.get("OMP_NUM_THREADS", "")
    return {
        "function": "autograder.isolated.kernelstub:start_kernel",
        "args": [connection_file],
        "cwd": working_folder,
        "log": env.get(KERNEL_LOG_ENV, os.devnull),
        "env": env,
        "threads": int(threads) if threads.isdigit() else None,
        "wall": NO_WALL_LIMIT,
        "memory": resource.getrlimit(resource.RLIMIT_AS)[0],
        "file_size": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
    }


def main() -> None:
    socket_path, token, connection_file, working_folder = sys.argv[1:5]
    job = kernel_job(connection_file, working_folder)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(socket_path)
        connection.sendall((json.dumps({"token": token, "job": job}) + "\n").encode())

        def relay(signum: int, frame: object) -> None:
            connection.sendall(f"signal {signum}\n".encode())

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, relay)
        reply = connection.makefile("r").readline()
    sys.exit(json.loads(reply)["returncode"] if reply else 1)


if __name__ == "__main__":
    main()
