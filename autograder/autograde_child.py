"""The program ``grade`` runs under limits: nbgrader's autograde of one student in a course copy.

The course copy holds only a gradebook with the assignment's definition and the one
submission. With ``--sandbox`` the kernel runs in :mod:`autograder.sandbox`, where it
sees its own notebook folder and nothing of the course; nbgrader itself (this process)
stays outside, so the student's code cannot reach even the copy's gradebook.
"""

import argparse
import os
import sys
from pathlib import Path

from nbgrader.apps import NbGraderAPI

from autograder.course import course_config
from autograder.sandbox import READABLE_ENV, WRITABLE_ENV, SandboxedKernelManager


def main() -> None:
    parser = argparse.ArgumentParser(description="nbgrader autograde of one student in a course copy")
    parser.add_argument("course", type=Path)
    parser.add_argument("assignment")
    parser.add_argument("student")
    parser.add_argument("--cell-timeout", type=int, required=True)
    parser.add_argument("--sandbox", action="store_true")
    parser.add_argument("--readable", type=Path, nargs="*", default=[], help="extra read-only paths (data)")
    args = parser.parse_args()
    config = course_config(args.course)
    config.Execute.timeout = args.cell_timeout
    if args.sandbox:
        notebook_folder = args.course / "grading" / "autograded" / args.student / args.assignment
        os.environ[WRITABLE_ENV] = str(notebook_folder.resolve())
        os.environ[READABLE_ENV] = os.pathsep.join(str(p.resolve()) for p in args.readable)
        config.Execute.kernel_manager_class = SandboxedKernelManager
    result = NbGraderAPI(config=config).autograde(args.assignment, args.student, force=True, create=True)
    print(result["log"])
    if not result["success"]:
        print(result.get("error", ""))
    sys.exit(0 if result["success"] else 1)


if __name__ == "__main__":
    main()
