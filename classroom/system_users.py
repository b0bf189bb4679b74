"""System groups and users for the hub (root only): what ``useradd`` and friends do, checked."""

import grp
import pwd
import re
import subprocess
from pathlib import Path

# A name useradd accepts everywhere and JupyterHub keeps as is (it lower-cases usernames).
VALID_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


def check_name(name: str) -> str:
    if not VALID_NAME.match(name):
        raise ValueError(
            f"{name!r} cannot be a system user name: use lower-case letters, digits, '-' and '_', "
            "starting with a letter, at most 32 characters (the same id that collect and export use)"
        )
    return name


def ensure_group(name: str) -> None:
    try:
        grp.getgrnam(name)
    except KeyError:
        subprocess.run(["groupadd", name], check=True)


def exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def ensure_user(name: str, group: str) -> bool:
    """Create ``name`` (with a home and a primary group of its own) in ``group`` unless it exists; its home is made
    private (700). Whether it was made now (:mod:`classroom.accounts` records those).

    Debian's useradd makes homes with the umask (755): everyone could read everyone's work. The user's own group
    alone may read their cgroups' statistics (classroom/cgroups.py).
    """
    check_name(name)
    ensure_group(group)
    made = not exists(name)
    if made:
        subprocess.run(["useradd", "--create-home", "--user-group", "--shell", "/bin/bash", "--groups", group, name],
                       check=True)
    elif name not in grp.getgrnam(group).gr_mem:
        subprocess.run(["usermod", "--append", "--groups", group, name], check=True)
    Path(pwd.getpwnam(name).pw_dir).chmod(0o700)
    return made


def ensure_service_user(name: str) -> bool:
    """A system account for a service (no login, no home): its own group, nobody else in it. Whether it was made now."""
    check_name(name)
    made = not exists(name)
    if made:
        subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", name], check=True)
    return made


def set_password(name: str, password: str) -> None:
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)


def remove_user(name: str) -> None:
    if exists(name):
        subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)
