"""The system accounts the course made for a class: recorded as they are made, removed on request (as root).

``provision`` (the instructors it was named, ngshare's service account) and the roster script (the
students) record each account they create, with its uid, in the hub's state (``state/accounts.json``,
root only). ``python -m classroom.provision --remove-accounts`` removes those accounts and no other: an
account that was there before (an existing user named an instructor or in the roster) was never
recorded, and one whose uid is no longer the recorded one (removed, and made again by someone else) is
left. So is an account with a process still running (userdel refuses), and the line says so. Each home
stays, given to root (a later account given the same uid must not own it), unless asked (``--remove-homes``).
"""

import json
import pwd
import subprocess
from pathlib import Path

ACCOUNTS_FILE = "accounts.json"  # in the hub's state folder: {account: uid}


def recorded(state: Path, name: str = ACCOUNTS_FILE) -> dict:
    """A record the hub keeps in its state folder (``accounts.json``, the roster's ``languages.json``); none: ``{}``."""
    path = state / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def write_record(state: Path, record: dict, name: str = ACCOUNTS_FILE) -> None:
    state.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = state / name
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    path.chmod(0o600)


def record_created(state: Path, name: str) -> None:
    """Add the account ``name``, just made by the course, to the record (at once: a later failure keeps it there)."""
    write_record(state, {**recorded(state), name: pwd.getpwnam(name).pw_uid})


def remove_accounts(state: Path, homes: bool) -> tuple[list[str], list[str]]:
    """Remove the recorded accounts (their homes too with ``homes``): the removed, and a line for each one left."""
    accounts, removed, left = recorded(state), [], []
    for name, uid in sorted(accounts.items()):
        try:
            account = pwd.getpwnam(name)
        except KeyError:
            del accounts[name]  # removed by hand already
            continue
        if account.pw_uid != uid:
            left.append(f"{name}: its uid is {account.pw_uid}, not {uid} as the course made it: made again since, kept")
            del accounts[name]  # no longer the course's
            continue
        home = Path(account.pw_dir)  # none for ngshare's service account (/nonexistent)
        remove = ["--remove"] if homes and home.is_dir() else []
        done = subprocess.run(["userdel", *remove, name], capture_output=True, text=True)
        if done.returncode:  # 8: one of its processes runs (its server: stop the hub and the servers first)
            left.append(f"{name}: kept, userdel said: {done.stderr.strip()} (exit {done.returncode})")
            continue
        del accounts[name]
        removed.append(name)
        if not homes and home.is_dir():
            subprocess.run(["chown", "-R", "--no-dereference", "root:root", str(home)], check=True)
    write_record(state, accounts)
    return removed, left
