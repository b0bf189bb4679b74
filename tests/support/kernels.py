"""A Jupyter kernel for the tests that run a notebook with nbclient.

On TCP, a kernel's ports are chosen free by its manager and bound later by the kernel; under the
parallel suite another process can take one in between, and the kernel dies before it answers
("Kernel died before replying to kernel_info", seen in a full run). On IPC sockets there is no port
to lose: each socket is a file under a folder of the test's own.
"""

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from jupyter_client import KernelManager


@contextmanager
def ipc_kernel_manager() -> Iterator[KernelManager]:
    """A manager of a ``python3`` kernel on IPC sockets, in a short temporary folder (a socket path has a
    length limit of about 100 characters) removed afterwards. Give it to ``nbclient.NotebookClient(km=...)``."""
    with tempfile.TemporaryDirectory(prefix="kernel-") as folder:
        yield KernelManager(kernel_name="python3", transport="ipc", ip=f"{folder}/socket")
