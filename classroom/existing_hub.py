"""The course's part of an existing JupyterHub's configuration: :func:`configure`, which its ``jupyterhub_config.py``
calls (``python -m classroom.install`` prints the lines; docs/existing-hub.md).

It keeps the hub's own authenticator, spawner and proxy, and adds what the course's hub (classroom/jupyterhub_config.py)
gives each server: its role's settings, and the ``student-view`` service (what each holds: docs/existing-hub.md).
Whoever set a ``pre_spawn_hook`` before keeps it: it runs first. Imported by the hub from the course's runtime folder
(``sys.path``), so it needs nothing but the standard library and the course's layout.
"""

import os
from pathlib import Path

from classroom.layout import DEFAULT_PREFIX, HubLayout, is_instructor
from classroom.student_view import VIEW_FOLDER, VIEW_VARIABLE

SAME_NAME = "{student}"  # a hub user's system account has their name (LocalProcessSpawner, the course's own hub)
DUE_DATES_EVERY = 30  # seconds between two looks at the due dates, as on the course's hub (make hub DUE_DATES_EVERY)


def role_config_path(layout: HubLayout, instructor: bool) -> str:
    """``JUPYTER_CONFIG_PATH`` for a role's servers: its own settings, then everyone's."""
    role = "instructor" if instructor else "student"
    return os.pathsep.join([str(layout.role_config(role)), str(layout.role_config("common"))])


def role_environment(layout: HubLayout, instructor: bool, environment: dict[str, str]) -> dict[str, str]:
    """``environment`` with the role's Jupyter settings, and for an instructor the course folder's packages."""
    environment = {**environment, "JUPYTER_CONFIG_PATH": role_config_path(layout, instructor)}
    if instructor:  # `python -m autograder` and formgrader's settings import the course folder's packages
        environment["PYTHONPATH"] = str(layout.course)
    return environment


def add_service(c, service: dict) -> None:
    """Add ``service`` to the hub's, after those set before (by an earlier config, or an extra one)."""
    services = c.JupyterHub.services if isinstance(c.JupyterHub.services, list) else []
    c.JupyterHub.services = [*services, service]


def add_student_view(c, layout: HubLayout, command: list[str], state: Path, every: int, pythonpath: str) -> None:
    """The ``student-view`` service (``command``: how to run Python), and where each server reads what it wrote."""
    environment = c.Spawner.environment if isinstance(c.Spawner.environment, dict) else {}
    c.Spawner.environment = {**environment, VIEW_VARIABLE: str(layout.prefix / VIEW_FOLDER),
                             "TFCOURSE_DUE_DATES_REFRESH": str(every)}
    add_service(c, {
        "name": "student-view",
        "command": [*command, "-m", "classroom.publish_student_view", "--prefix", str(layout.prefix),
                    "--state", str(state), "--every", str(every)],
        "environment": {"PYTHONPATH": pythonpath},
    })


def configure(c, python: Path | str, prefix: Path | str = DEFAULT_PREFIX, account_name: str = SAME_NAME,
              due_dates_every: int = DUE_DATES_EVERY) -> None:
    """Add the course (laid out under ``prefix`` by ``python -m classroom.install``) to the hub's config ``c``.

    ``python`` is the instructors' environment's interpreter, which runs the ``student-view`` service (it reads the
    course folder). ``account_name`` makes a hub user's system account name, which the course's groups list, from
    their hub name (``{student}``; TLJH's: ``jupyter-{student}``), as collect's ``SafeExchangeCollect.account_name``.
    """
    layout = HubLayout(Path(prefix))
    previous = c.Spawner.pre_spawn_hook if callable(c.Spawner.pre_spawn_hook) else None

    def course_roles(spawner) -> None:
        if previous is not None:
            previous(spawner)
        instructor = is_instructor(account_name.format(student=spawner.user.name))
        spawner.environment = role_environment(layout, instructor, spawner.environment)
        if instructor:
            spawner.notebook_dir = str(layout.course)

    c.Spawner.pre_spawn_hook = course_roles
    add_student_view(c, layout, [str(python)], layout.state, due_dates_every, str(layout.course))
