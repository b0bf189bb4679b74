"""The job ``grade`` runs in a zygote child: nbgrader's autograde of one student in a course copy.

The course copy holds only the one submission; its gradebook (the assignment's definition,
hidden tests included) lies outside it. Kernels are forked by a kernel zygote
(:mod:`autograder.kernelstub`), which runs, when bubblewrap is there, in a sandbox whose only
writable folder holds this course copy: the student's code sees nothing of the course, the
gradebooks or the other submissions. nbgrader itself (this process) stays outside.
"""

import os
import sys
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbgrader.apps import NbGraderAPI

from autograder import kernelstub
from autograder.course import course_config
from autograder.gradebook import sqlite_url

SOCKET_ENV, TOKEN_ENV = "AUTOGRADER_KERNEL_SOCKET", "AUTOGRADER_KERNEL_TOKEN"


class ZygoteKernelManager(AsyncKernelManager):
    """Starts :mod:`autograder.kernelstub` instead of a kernel: the kernel zygote forks the kernel."""

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        stub = kernelstub.__file__
        return [sys.executable, "-I", "-S", stub, os.environ[SOCKET_ENV], os.environ[TOKEN_ENV], self.connection_file]


def autograde(
    course: str, gradebook: str, assignment: str, student: str, cell_timeout: int, kernel_socket: str, token: str
) -> int:
    """Autograde ``student``'s ``assignment`` in the course copy at ``course``; 0 when nbgrader succeeded.

    Kernels come from the zygote listening on ``kernel_socket``, which answers those who know ``token``.
    """
    config = course_config(Path(course))
    config.CourseDirectory.db_url = sqlite_url(Path(gradebook))
    config.Execute.timeout = cell_timeout
    config.Execute.shutdown_kernel = "immediate"  # nothing after the last cell is graded: no graceful wait
    config.Execute.kernel_manager_class = ZygoteKernelManager
    # Beside the course copy, where the sandboxed kernels can read (and write) them.
    shared = Path(course).resolve().parent
    config.ZygoteKernelManager.connection_file = str(shared / "kernel-connection.json")
    os.environ[kernelstub.KERNEL_LOG_ENV] = str(shared / "kernel.log")
    os.environ[SOCKET_ENV], os.environ[TOKEN_ENV] = kernel_socket, token
    result = NbGraderAPI(config=config).autograde(assignment, student, force=True, create=True)
    print(result["log"])
    if not result["success"]:
        print(result.get("error", ""))
    return 0 if result["success"] else 1
