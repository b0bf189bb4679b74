"""The class a capacity run works with: its hub laid out and started, its system users, its releases, its hand-ins.

The hub is the course's own (``classroom/jupyterhub_config.py`` from a layout that
``classroom.provision`` made), started by the classroom test's helper (``testbed/hub.py``)
under a prefix of the run's own, so that the run and the test suite (``/srv/tfcourse-test``) never
lay out each other's course. A prefix without an environment yet can be seeded from another
prefix's (a copy, its scripts pointed at their new home): minutes of ``pip install`` saved.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from autograder.course.settings import HubSettings
from classroom.layout import COURSE_ID, INSTRUCTORS, STUDENTS, HubLayout
from classroom.provision import provision
from classroom.system_users import ensure_user, remove_user
from testbed import hub as hub_helpers
from testbed.hub import Hub, fresh_layout, start_hub

# Formatted with the test's EXTRA_CONFIG (hence the doubled braces); a loaded subconfig's dict is a lazy value, which
# takes update(), merged into the main config's. Every kernel in fast mode, as the test suite's are
# (tfcourse.modes): 06 trains for seconds, not minutes.
FAST_KERNELS = 'c.Spawner.environment.update({{"TFCOURSE_FAST": "1"}})\n'
# Culling at test speed needs activity reported at test speed: the culler reads each server's last activity, which
# the hub learns from the proxy and from the server, each every 300 s by default; an active student's server
# could otherwise look idle for minutes and be culled under them.
QUICK_ACTIVITY = (
    "c.JupyterHub.last_activity_interval = {seconds}\n"
    'c.Spawner.environment.update({{{{"JUPYTERHUB_ACTIVITY_INTERVAL": "{seconds}"}}}})\n'
)


def extra_config(cull_idle: int | None) -> str:
    """What the benchmark's hub adds to the test's extra config: fast kernels; quick activity under quick culling."""
    quick = cull_idle is not None and 0 < cull_idle < 600
    return FAST_KERNELS + (QUICK_ACTIVITY.format(seconds=max(5, cull_idle // 4)) if quick else "")


def seed_environment(source: HubLayout, target: HubLayout) -> bool:
    """Copy ``source``'s hub environment to ``target`` when ``target`` has none; True when it did.

    A virtual environment moves with its folder but for the first line of its scripts, which names
    its interpreter by full path: those are rewritten. provision's stamp comes along, so it rebuilds
    nothing when the pins are the same, and writes the runtime's ``.pth`` for the new prefix.
    """
    if target.python.exists() or not source.python.exists():
        return False
    target.prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(source.env), str(target.env)], check=True)
    old, new = f"#!{source.env}/bin/", f"#!{target.env}/bin/"
    for script in (target.env / "bin").iterdir():
        if script.is_symlink() or not script.is_file():
            continue
        with script.open("rb") as handle:
            first = handle.readline()
        if first.startswith(old.encode()):
            script.write_bytes(first.replace(old.encode(), new.encode(), 1) + script.read_bytes()[len(first) :])
    return True


def student_names(first: int, count: int, stem: str = "tfcap") -> list[str]:
    return [f"{stem}-{index:03d}" for index in range(first, first + count)]


def teacher_name(stem: str = "tfcap") -> str:
    return f"{stem}-teacher"


def make_students(names: list[str]) -> set[int]:
    """The students' system accounts (made if missing); their uids."""
    for name in names:
        ensure_user(name, STUDENTS)
    return {pwd.getpwnam(name).pw_uid for name in names}


def release(layout: HubLayout, teacher: str, assignment: str) -> None:
    """``nbgrader release_assignment`` as the instructor, in the course folder, with the instructor's settings."""
    account = pwd.getpwnam(teacher)
    config = [str(layout.role_config("instructor")), str(layout.role_config("common"))]
    environment = {"HOME": account.pw_dir, "USER": teacher, "LOGNAME": teacher, "LANG": "C.UTF-8",
                   "PATH": f"{layout.env / 'bin'}:/usr/bin:/bin", "JUPYTER_CONFIG_PATH": os.pathsep.join(config),
                   "PYTHONPATH": str(layout.course)}
    done = subprocess.run(
        [str(layout.env / "bin" / "nbgrader"), "release_assignment", assignment, "--force"],
        cwd=layout.course, env=environment, user=teacher, group=account.pw_gid,
        extra_groups=os.getgrouplist(teacher, account.pw_gid),
        capture_output=True, text=True, timeout=300,
    )
    if done.returncode:
        raise RuntimeError(f"{teacher}: nbgrader release_assignment {assignment} exited {done.returncode}:\n"
                           f"{(done.stdout + done.stderr)[-3000:]}")


def handed_in(layout: HubLayout, student: str, assignment: str) -> int:
    """How many hand-ins of ``assignment`` by ``student`` the exchange's inbound holds (read as root)."""
    return len(list((layout.exchange / COURSE_ID / "inbound").glob(f"{student}+{assignment}+*")))


def hub_settings(**chosen: int | str | None) -> dict[str, str]:
    """The hub's variables for these ``HubSettings`` (``cull_idle=600``); None leaves the hub's own default."""
    return {HubSettings.variable(name): str(value) for name, value in chosen.items() if value is not None}


@contextmanager
def class_hub(layout: HubLayout, teacher: str, assignments: list[str], log: Path,
              settings: dict[str, str], extra: str = FAST_KERNELS) -> Iterator[Hub]:
    """The layout laid anew (environments kept), the instructor made, ``assignments`` released, the hub started with
    ``settings`` (its culling and limits variables) and ``extra`` config (fast kernels); the hub stopped after."""
    remove_user(teacher)
    layout = fresh_layout(layout.prefix)
    hub = None
    try:
        ensure_user(teacher, INSTRUCTORS)
        provision(layout, [teacher], refresh_course=True)
        for assignment in assignments:
            release(layout, teacher, assignment)
        with mock.patch.dict(os.environ, settings), \
                mock.patch.object(hub_helpers, "EXTRA_CONFIG", hub_helpers.EXTRA_CONFIG + extra):
            hub = start_hub(layout, log)
        yield hub
    finally:
        if hub is not None:
            hub.stop()
        remove_user(teacher)
        shutil.rmtree(layout.state, ignore_errors=True)
