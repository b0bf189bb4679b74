"""The job ``grade`` runs in a zygote child: nbgrader's autograde of one student in a course copy.

The course copy holds only the one submission; it and its gradebook (the assignment's definition, hidden tests
included) lie in this process's own folder, outside the kernels' view (the kernels, forked by a kernel zygote:
:mod:`autograder.isolated.kernelstub`; what each side sees: :mod:`autograder.pipeline.job.kernel_run` and
docs/maintainers.md, The sandbox). nbgrader itself (this process) runs in a sandbox of its own. Neither has a
network: the kernel's channels are Unix sockets in the kernel's folder (zmq's ipc transport).
"""

import os
import sys
import tempfile
from pathlib import Path

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.apps import NbGraderAPI
from traitlets import Unicode

from autograder.course.notebooks import cell_key
from autograder.course.paths import sqlite_url
from autograder.course.settings import course_config
from autograder.isolated import kernelstub
from autograder.isolated.alembic_head import use_in_process_alembic_head
from autograder.isolated.protocol import AutogradeRequest, StubLaunch, encode
from tfcourse.language import EDITION_VARIABLE

use_in_process_alembic_head()  # the warm-up creates a gradebook; see alembic_head


class ZygoteKernelManager(AsyncKernelManager):
    """Starts :mod:`autograder.isolated.kernelstub` instead of a kernel: the kernel zygote forks the kernel.

    The kernel runs in ``working_folder``, not in the folder of the notebook nbgrader executes.
    """

    working_folder = Unicode(help="the kernel's working folder, inside the kernels' sandbox").tag(config=True)
    kernel_log = Unicode(help="where the kernel's own output goes").tag(config=True)
    zygote_socket = Unicode(help="the kernel zygote's Unix socket").tag(config=True)
    zygote_token = Unicode(help="the token the kernel zygote answers to").tag(config=True)

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        launch = StubLaunch(self.zygote_socket, self.zygote_token, self.connection_file, self.working_folder,
                            self.kernel_log)
        return [sys.executable, "-I", "-S", kernelstub.__file__, encode(launch).strip()]


def autograde(request: AutogradeRequest) -> int:
    """Autograde the request's student in its course copy; 0 when nbgrader succeeded."""
    os.environ[EDITION_VARIABLE] = request.edition  # this job's process: the kernels it starts inherit it
    config = course_config(Path(request.course))
    config.CourseDirectory.db_url = sqlite_url(Path(request.gradebook))
    config.Execute.timeout = request.cell_timeout
    config.Execute.timeout_func = lambda cell: request.cell_limits.get(cell_key(cell), request.cell_timeout)
    # After a cell is interrupted at its limit, a busy machine may take more than nbclient's default 4 s
    # to report the kernel idle; nbgrader would then give up on the whole notebook.
    config.Execute.iopub_timeout = 15
    config.Execute.shutdown_kernel = "immediate"  # nothing after the last cell is graded: no graceful wait
    config.Execute.kernel_manager_class = ZygoteKernelManager
    # Where the sandboxed kernels can read (and write) them.
    shared = Path(request.kernel_folder)
    config.ZygoteKernelManager.connection_file = str(shared / "kernel-connection.json")
    # The kernel's channels are Unix sockets in that folder (zmq's ipc transport), not TCP ports:
    # nbgrader and the kernel each run without a network, and still reach each other.
    config.ZygoteKernelManager.transport = "ipc"
    config.ZygoteKernelManager.ip = str(shared / "kernel-ipc")
    config.ZygoteKernelManager.working_folder = str(shared / "work")
    config.ZygoteKernelManager.kernel_log = str(shared / "kernel.log")
    config.ZygoteKernelManager.zygote_socket = request.kernel_socket
    config.ZygoteKernelManager.zygote_token = request.kernel_token
    result = NbGraderAPI(config=config).autograde(request.assignment, request.student, force=True, create=True)
    print(result["log"])
    if not result["success"]:
        print(result.get("error", ""))
    return 0 if result["success"] else 1


def warm_up() -> None:
    """Autograde a one-test notebook without a kernel, in the zygote, before it forks any job.

    nbgrader's first autograde in a process compiles its gradebook queries (SQLAlchemy caches
    them per process) and loads nbconvert's exporters: a second or more of each job's time. Done
    once here, every forked job finds them ready.
    """
    with tempfile.TemporaryDirectory(prefix="warm-up-") as scratch:
        course = Path(scratch)
        test = new_code_cell("assert True", metadata={"nbgrader": {
            "grade": True, "solution": False, "locked": True, "grade_id": "warm", "points": 1, "schema_version": 3}})
        for folder, student in (("source", ""), ("submitted", "someone")):
            target = course / folder / student / "warm" if student else course / folder / "warm"
            target.mkdir(parents=True)
            nbformat.write(new_notebook(cells=[test]), target / "warm.ipynb")
        config = course_config(course)
        config.CourseDirectory.source_directory = "source"
        config.CourseDirectory.submitted_directory = "submitted"
        config.CourseDirectory.db_url = sqlite_url(course / "gradebook.db")
        config.Execute.enabled = False  # no kernel: the cells are not what is being warmed
        api = NbGraderAPI(config=config)
        api.generate_assignment("warm", force=True, create=True)
        api.autograde("warm", "someone", force=True, create=True)
