"""The course as a plugin of The Littlest JupyterHub (TLJH): its installer and hub call these hooks.

TLJH's hook specifications are ``tljh/hooks.py`` (https://github.com/jupyterhub/the-littlest-jupyterhub, read at
commit 84ed38fd1f7c239c30378fecc23079911224066c); TLJH finds a plugin through the ``tljh`` entry point
(``pyproject.toml``). On TLJH every user's server runs ``/opt/tljh/user`` (``$TLJH_INSTALL_PREFIX/user``), the
instructors' too, and the system account of hub user ``ada`` is ``jupyter-ada``. What each hook does: the table in
docs/existing-hub.md.
"""

import os
from pathlib import Path

import pluggy

from classroom.layout import DEFAULT_PREFIX, INSTRUCTORS, STUDENTS, is_instructor
from classroom.student_pins import requirements as student_requirements

hookimpl = pluggy.HookimplMarker("tljh")
APT_PACKAGES = ["bubblewrap"]
# TLJH's system account of hub user NAME (tljh/user_creating_spawner.py): jupyter-NAME (hashed past 32 characters, so
# hub names of up to 24 characters).
ACCOUNT_NAME = "jupyter-{student}"


def user_env() -> Path:
    """TLJH's user environment: ``tljh.config.USER_ENV_PREFIX``, from the same variable TLJH reads."""
    return Path(os.environ.get("TLJH_INSTALL_PREFIX", "/opt/tljh")) / "user"


@hookimpl
def tljh_extra_apt_packages() -> list[str]:
    return APT_PACKAGES


@hookimpl
def tljh_extra_user_pip_packages() -> list[str]:
    return [line for line in student_requirements().splitlines() if line and not line.startswith("#")]


@hookimpl
def tljh_post_install() -> None:
    from classroom.install import install  # runs pip and makes groups: only when TLJH installs

    install(DEFAULT_PREFIX, user_env(), user_env(), [], account_name=ACCOUNT_NAME)


@hookimpl
def tljh_new_user_create(username: str) -> None:
    from classroom.system_users import ensure_user

    ensure_user(username, INSTRUCTORS if is_instructor(username) else STUDENTS)


@hookimpl
def tljh_custom_jupyterhub_config(c) -> None:
    from classroom.existing_hub import configure

    configure(c, python=user_env() / "bin" / "python", prefix=DEFAULT_PREFIX, account_name=ACCOUNT_NAME)
