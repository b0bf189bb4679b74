"""At a class's end, ``provision --remove-accounts`` removes the accounts the course made, and no other.

Real system users: three students made by the roster script as ``make hub-students`` runs it, a
service account made as ``provision`` makes ngshare's, one account that was there before (named in
the roster all the same), one the roster made that an administrator removed and made again by hand
(another uid). One of the course's students keeps a process running, and one leaves a link to
another account's file in their home. The command, as ``make hub-remove-accounts`` runs it, removes
the accounts the course made and nothing else, gives their homes to root, says which it kept and
why; once the process ends, ``--remove-homes`` removes the last one with its home. It creates
system users (root only): elsewhere it skips.
"""

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course.settings import REPO_ROOT
from classroom.accounts import record_created
from classroom.layout import HubLayout
from classroom.system_users import ensure_service_user, exists, remove_user

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="makes system users: root only (CI runs as root)")
ANN, BEN, BUSY, OLD, AGAIN = "tfacct-ann", "tfacct-ben", "tfacct-busy", "tfacct-old", "tfacct-again"
SERVICE = "tfacct-service"  # made as provision makes ngshare's account: no home
EVERYONE = (ANN, BEN, BUSY, OLD, AGAIN, SERVICE)


def run(*command: str) -> subprocess.CompletedProcess:
    """A course command as make runs it, from the repository (its own code first)."""
    return subprocess.run([sys.executable, "-m", *command], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


def as_user(name: str, *command: str) -> subprocess.Popen:
    return subprocess.Popen(list(command), user=name, group=pwd.getpwnam(name).pw_gid, extra_groups=[], cwd="/")


def test_only_the_accounts_the_course_made_are_removed(tmp_path: Path) -> None:
    layout = HubLayout(tmp_path / "hub")
    for name in EVERYONE:
        remove_user(name)
    busy = None
    try:
        subprocess.run(["useradd", "--create-home", OLD], check=True)  # an account of the machine's own
        kept_file = Path(pwd.getpwnam(OLD).pw_dir) / "own.txt"
        kept_file.write_text("not the course's")
        os.chown(kept_file, pwd.getpwnam(OLD).pw_uid, pwd.getpwnam(OLD).pw_gid)
        roster = tmp_path / "roster.csv"
        roster.write_text("student\n" + "".join(f"{name}\n" for name in (ANN, BEN, BUSY, OLD, AGAIN)))
        made = run("classroom.roster", str(roster), "--prefix", str(layout.prefix))
        assert made.returncode == 0, made.stderr
        assert ensure_service_user(SERVICE)
        record_created(layout.state, SERVICE)
        subprocess.run(["userdel", AGAIN], check=True)  # an administrator's own account under the same name
        subprocess.run(["useradd", "--uid", str(pwd.getpwnam(OLD).pw_uid + 1000), AGAIN], check=True)
        again_uid = pwd.getpwnam(AGAIN).pw_uid
        homes = {name: Path(pwd.getpwnam(name).pw_dir) for name in (ANN, BEN, BUSY)}
        link = as_user(ANN, "ln", "-s", str(kept_file), str(homes[ANN] / "theirs"))  # ANN's try at OLD's file
        assert link.wait(timeout=30) == 0
        busy = as_user(BUSY, "sleep", "300")

        first = run("classroom.provision", "--prefix", str(layout.prefix), "--remove-accounts")
        said = first.stdout + first.stderr
        assert first.returncode == 1, f"a kept account should fail the command; it said:\n{said}"
        assert not exists(ANN) and not exists(BEN) and not exists(SERVICE), f"the course's should be gone:\n{said}"
        assert exists(OLD) and kept_file.read_text() == "not the course's", "an account of the machine's was touched"
        assert kept_file.stat().st_uid == pwd.getpwnam(OLD).pw_uid, "ANN's link gave OLD's file to root"
        assert exists(AGAIN) and pwd.getpwnam(AGAIN).pw_uid == again_uid, "an account made again by hand was removed"
        assert f"{AGAIN}: its uid is {again_uid}" in said, said
        assert exists(BUSY) and f"{BUSY}: kept, userdel said:" in said, said
        for name in (ANN, BEN):
            assert homes[name].is_dir() and homes[name].stat().st_uid == 0, f"{name}'s home should stay, root's"
        assert f"removed 3 accounts the course made: {ANN}, {BEN}, {SERVICE}" in said, said

        busy.kill()
        busy.wait(timeout=30)
        second = run("classroom.provision", "--prefix", str(layout.prefix), "--remove-accounts", "--remove-homes")
        assert second.returncode == 0, second.stdout + second.stderr
        assert not exists(BUSY) and not homes[BUSY].exists(), second.stdout
        assert exists(OLD) and exists(AGAIN), "the second run removed an account the course did not make"
    finally:
        if busy is not None and busy.poll() is None:
            busy.kill()
            busy.wait(timeout=30)
        for name in EVERYONE:
            remove_user(name)
            shutil.rmtree(f"/home/{name}", ignore_errors=True)  # the homes the command kept
