"""``python -m classroom.install``: add the course to a JupyterHub a department already runs (as root).

The administrator keeps their JupyterHub, authenticator, spawner and proxy; this lays the course out under one
prefix with classroom/provision.py's own steps, and ends by printing the lines to add at the end of the hub's
``jupyterhub_config.py`` (classroom/existing_hub.py). What goes where, and the commands: docs/existing-hub.md. Run
it again after ``git pull``: pip runs where the pins changed since, and the runtime and settings are written afresh.
"""

import argparse
import hashlib
import os
from pathlib import Path

from classroom.existing_hub import SAME_NAME
from classroom.layout import DEFAULT_PREFIX, HubLayout
from classroom.provision import (
    REPO,
    hub_constraints,
    install_pinned,
    install_runtime,
    lay_out,
    make_course,
    make_exchange,
    readable_by_all,
    stamped,
    write_config,
)
from classroom.student_pins import requirements as student_requirements

UNWANTED = REPO / "requirements-removed.txt"  # what install_pinned uninstalls
HUB_LINES = """\
# The course "Transformers from scratch" (python -m classroom.install; docs/existing-hub.md)
import sys  # noqa: E402
sys.path.insert(0, {runtime!r})
from classroom.existing_hub import configure  # noqa: E402
configure(c, python={python!r}, prefix={prefix!r}, account_name={account_name!r})
"""


def interpreter(env: Path) -> Path:
    python = env / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{env} is not a Python environment (no bin/python): name the prefix of the one the "
                         "servers run, as `sys.prefix` prints it there")
    return python


def install_once(python: Path, requirements: Path, constraints: Path, role: str) -> None:
    """pip, unless these very pins were installed into ``python``'s environment already (a stamp there says so)."""
    stamp = python.parents[1] / f".tfcourse-{role}-pins"
    value = hashlib.sha256(b"".join(path.read_bytes() for path in (requirements, constraints, UNWANTED))).hexdigest()
    if stamped(stamp, value):
        return
    install_pinned(python, requirements, constraints)
    stamp.write_text(value)


def install(prefix: Path, students: Path | None, instructor: Path | None, instructor_users: list[str],
            refresh_course: bool = False, account_name: str = SAME_NAME) -> HubLayout:
    """Lay the course out under ``prefix`` for the users' and instructors' environments given; its layout."""
    students_python = interpreter(students) if students is not None else None  # both checked before any change
    instructor_python = interpreter(instructor) if instructor is not None else None
    if os.geteuid() != 0:
        raise SystemExit("classroom.install makes groups and folders other users own: run it as root")
    layout = HubLayout(prefix, users_env=students)
    lay_out(layout, instructor_users)
    pins = layout.prefix / "pins"
    pins.mkdir(exist_ok=True)
    (pins / "constraints.txt").write_text(hub_constraints())
    (pins / "students.txt").write_text(student_requirements())
    readable_by_all(pins)
    if students_python is not None:
        install_once(students_python, pins / "students.txt", pins / "constraints.txt", "students")
        install_runtime(layout)
    if instructor_python is not None:
        install_once(instructor_python, REPO / "requirements.txt", pins / "constraints.txt", "instructor")
        make_course(layout, refresh_course)
    write_config(layout)
    with (layout.role_config("instructor") / "nbgrader_config.py").open("a") as settings:
        settings.write("# Each student's account: their hand-in's files must be its (python -m classroom.install).\n"
                       f"c.SafeExchangeCollect.account_name = {account_name!r}\n")
    make_exchange(layout)
    return layout


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m classroom.install", description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=Path, metavar="ENV", help="the prefix of the users' Python environment")
    parser.add_argument("--instructor", type=Path, metavar="ENV", help="the prefix of the instructors' environment")
    parser.add_argument("--instructor-user", action="append", default=[], metavar="NAME",
                        help="a system user to add to the instructors' group (again for each)")
    parser.add_argument("--prefix", type=Path, default=DEFAULT_PREFIX,
                        help=f"the course's folder (default {DEFAULT_PREFIX})")
    parser.add_argument("--refresh-course", action="store_true", help="copy the course files over the course folder")
    parser.add_argument("--account-name", default=SAME_NAME, metavar="TEMPLATE",
                        help="a hub user's system account, from their name (default: the same name; TLJH: "
                        "jupyter-{student})")
    args = parser.parse_args()
    if args.students is None and args.instructor is None:
        parser.error("name --students ENV, --instructor ENV or both")
    students = args.students.resolve() if args.students else None
    instructor = args.instructor.resolve() if args.instructor else None
    layout = install(args.prefix.resolve(), students, instructor, args.instructor_user, args.refresh_course,
                     args.account_name)
    print(f"the course is laid out under {layout.prefix}")
    if instructor is not None:
        print("add these lines at the end of the hub's jupyterhub_config.py, then restart the hub:\n")
        print(HUB_LINES.format(runtime=str(layout.runtime), python=str(interpreter(instructor)),
                               prefix=str(layout.prefix), account_name=args.account_name))


if __name__ == "__main__":
    main()
