"""Each student's home a filesystem of its own (classroom/home_disks.py, ``make hub DISK_LIMIT=...``): a student who
writes until the disk refuses is stopped at their limit, in their own home, and another student's hand-in, the
instructor's collect and the hub's database still write on the disk they share.

Real system users (a student, another, an instructor) and the hub's real exchange layout (``make_exchange``), each
step as its user's account (``setpriv``, as the hub's spawner starts a server). The hand-in and the collect are the
copies nbgrader's submit and collect make (into the inbound, then into the course folder); the hub's database is a
SQLite file of root's. The shared disk here is the machine's own: without the limit the student would fill it (and
every other job on it), so the student writes twice their limit at most, and the test fails if that is not refused.

Root only, where a loop device can be mounted: elsewhere it skips and says why.
"""

import os
import pwd
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from classroom.home_disks import HomeDisks
from classroom.layout import COURSE_ID, INSTRUCTORS, STUDENTS, HubLayout
from classroom.provision import make_exchange
from classroom.system_users import ensure_group, ensure_user, remove_user

ADA, BOB, TEACHER = "tfdisk-ada", "tfdisk-bob", "tfdisk-teacher"
LIMIT = 32 * 2**20
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"
PYTHON = "/usr/bin/python3"
FILL = """
import errno, os
written = 0
try:
    with open(os.path.expanduser('~/fill'), 'wb') as sink:
        while written < 2 * LIMIT:
            written += sink.write(b'x' * 2**20)
            sink.flush()
            os.fsync(sink.fileno())
    print(written, 'accepted')
except OSError as error:
    print(written, errno.errorcode[error.errno])
""".replace("LIMIT", str(LIMIT))


def as_user(user: str, argv: list[str]) -> subprocess.CompletedProcess:
    account = pwd.getpwnam(user)
    become = [SETPRIV, f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups"]
    return subprocess.run([*become, *argv], capture_output=True, text=True, timeout=120,
                          env={"HOME": account.pw_dir, "PATH": "/usr/bin:/bin"})


def unmount(home: Path) -> None:
    if os.path.ismount(home):
        subprocess.run(["umount", str(home)], check=True)


@pytest.fixture(scope="module")
def hub() -> Iterator[tuple[HubLayout, HomeDisks]]:
    if os.geteuid() != 0:
        pytest.skip("the disk test makes system users and mounts their homes: root only (CI runs as root)")
    prefix = Path(tempfile.mkdtemp(prefix="tfdisk-"))
    prefix.chmod(0o755)
    layout, disks = HubLayout(prefix), HomeDisks(prefix / "homes")
    try:
        ensure_group(INSTRUCTORS)
        for user, group in ((ADA, STUDENTS), (BOB, STUDENTS), (TEACHER, INSTRUCTORS)):
            remove_user(user)
            ensure_user(user, group)
        make_exchange(layout)
        layout.course.mkdir()
        shutil.chown(layout.course, "root", INSTRUCTORS)
        layout.course.chmod(0o2770)  # as provision makes it (mkdir's mode passes through the umask)
        home = Path(pwd.getpwnam(ADA).pw_dir)
        (home / "kept.txt").write_text("Ada's work before the limit\n")
        shutil.chown(home / "kept.txt", ADA, ADA)
        try:
            for user in (ADA, BOB):
                disks.ensure(user, LIMIT)
        except subprocess.CalledProcessError as error:
            pytest.skip(f"a loop device cannot be mounted here ({error.stderr.strip()}): no home can be a disk")
        yield layout, disks
    finally:
        for user in (ADA, BOB, TEACHER):
            if user in {entry.pw_name for entry in pwd.getpwall()}:
                unmount(Path(pwd.getpwnam(user).pw_dir))
            remove_user(user)
        shutil.rmtree(prefix, ignore_errors=True)


def test_a_student_who_fills_their_home_is_stopped_at_their_limit_and_the_others_still_write(
    hub: tuple[HubLayout, HomeDisks],
) -> None:
    layout, _ = hub
    written, outcome = as_user(ADA, [PYTHON, "-c", FILL]).stdout.split()
    assert outcome == "ENOSPC" and int(written) <= LIMIT, (
        f"Ada wrote {int(written) >> 20} MiB under a {LIMIT >> 20} MiB limit and was told {outcome}: her home is "
        "not a disk of its own"
    )
    assignment = Path(pwd.getpwnam(BOB).pw_dir) / "01_attention"
    notebook = assignment / "01_attention.ipynb"
    save = f"import os\nos.mkdir({str(assignment)!r})\nopen({str(notebook)!r}, 'w').write('{{}}')"
    made = as_user(BOB, [PYTHON, "-c", save])
    assert made.returncode == 0, f"Bob could not save his notebook after Ada filled her home: {made.stderr}"
    handin = layout.exchange / COURSE_ID / "inbound" / f"{BOB}+01_attention+2026-01-01 00:00:00.000000 UTC+x1"
    handed = as_user(BOB, ["/bin/cp", "-r", str(assignment), str(handin)])
    assert handed.returncode == 0, f"Bob's hand-in failed after Ada filled her home: {handed.stderr}"
    collected = layout.course / f"{BOB}-01_attention"
    copied = as_user(TEACHER, ["/bin/cp", "-r", str(handin), str(collected)])
    assert copied.returncode == 0, f"the instructor's collect failed after Ada filled her home: {copied.stderr}"
    layout.state.mkdir(exist_ok=True)
    with sqlite3.connect(layout.state / "jupyterhub.sqlite") as database:
        database.execute("CREATE TABLE IF NOT EXISTS activity (blob BLOB)")
        database.execute("INSERT INTO activity VALUES (?)", (b"x" * 2**20,))


def test_the_home_keeps_its_files_and_comes_back_after_a_reboot(hub: tuple[HubLayout, HomeDisks]) -> None:
    _, disks = hub
    home = Path(pwd.getpwnam(ADA).pw_dir)
    assert os.path.ismount(home) and (home.stat().st_mode & 0o777) == 0o700 and home.stat().st_uid == pwd.getpwnam(
        ADA
    ).pw_uid, "Ada's home is not her own disk, closed to others"
    assert (home / "kept.txt").read_text() == "Ada's work before the limit\n", "the home's files were not carried"
    assert as_user(BOB, ["/bin/ls", str(home)]).returncode != 0, "Bob lists Ada's home"
    unmount(home)  # as a reboot leaves it
    assert disks.ensure(ADA, LIMIT) == home and os.path.ismount(home)
    assert (home / "kept.txt").exists(), "the remounted home lost Ada's files"
