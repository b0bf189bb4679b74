"""The job ``grade`` runs in a zygote child: nbgrader's autograde of one student in a course copy.

The course copy holds only a gradebook with the assignment's definition and the one
submission. With ``sandbox`` the kernel runs in :mod:`autograder.sandbox`, where it
sees its own notebook folder and nothing of the course; nbgrader itself (this process)
stays outside, so the student's code cannot reach even the copy's gradebook.
"""

import os
from pathlib import Path

from nbgrader.apps import NbGraderAPI

from autograder.course import course_config
from autograder.sandbox import READABLE_ENV, WRITABLE_ENV, SandboxedKernelManager


def autograde(course: str, assignment: str, student: str, cell_timeout: int, sandbox: bool, readable: list[str]) -> int:
    """Autograde ``student``'s ``assignment`` in the course copy at ``course``; 0 when nbgrader succeeded.

    ``readable`` are extra read-only paths for the sandboxed kernel (the course's data folder).
    """
    config = course_config(Path(course))
    config.Execute.timeout = cell_timeout
    config.Execute.shutdown_kernel = "immediate"  # nothing after the last cell is graded: no graceful wait
    if sandbox:
        notebook_folder = Path(course) / "grading" / "autograded" / student / assignment
        os.environ[WRITABLE_ENV] = str(notebook_folder.resolve())
        os.environ[READABLE_ENV] = os.pathsep.join(str(Path(p).resolve()) for p in readable)
        config.Execute.kernel_manager_class = SandboxedKernelManager
    result = NbGraderAPI(config=config).autograde(assignment, student, force=True, create=True)
    print(result["log"])
    if not result["success"]:
        print(result.get("error", ""))
    return 0 if result["success"] else 1
