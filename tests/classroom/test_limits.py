"""Per-student limits (classroom/cgroups.py, classroom/limits.py): past the memory limit, only that student loses
a process, and is told why; the CPU quota holds a busy student to their share; a fork bomb stops at the
student's process limit while the others still start theirs; no student reads another's statistics.

Two throwaway system users, each in their own cgroups the way the hub's spawner puts a student's
server there (the new process joins as root, then becomes the student: ``setpriv``): A allocates
past A's limit; B, holding memory below B's own, lives on, and so does this test's process, which
stands for the hub. No hub: a few seconds. The same through a real hub and JupyterLab's kernels
is in tests/browser/test_classroom_hub.py.

Root only, where cgroup v1's memory and cpu controllers are writable: elsewhere it skips with
the line the hub would log.
"""

import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from traitlets.config import Config

from autograder.course.settings import HubSettings
from classroom.cgroups import StudentCgroups, oom_kills
from classroom.layout import STUDENTS
from classroom.limits import configure_limits
from classroom.system_users import ensure_user, remove_user

REPO = Path(__file__).resolve().parents[2]
A, B = "tflim-ada", "tflim-bob"
LIMIT = 160 * 2**20
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"  # util-linux: becomes the user, then execs the command
PYTHON = "/usr/bin/python3"  # one every user may run (the repository's venv may live under /root)


@pytest.fixture(scope="module")
def cgroups() -> Iterator[StudentCgroups]:
    if os.geteuid() != 0:
        pytest.skip("the limits test makes system users and cgroups: root only (CI runs as root)")
    cgroups = StudentCgroups.under_this_process()
    why_not = cgroups.unavailable()
    if why_not:
        pytest.skip(f"per-student limits are off on this machine: {why_not}")
    for user in (A, B):
        remove_user(user)
        ensure_user(user, STUDENTS)
        cgroups.prepare(user, LIMIT, None)
    yield cgroups
    for user in (A, B):
        cgroups.remove(user)
        remove_user(user)


def as_student(cgroups: StudentCgroups, user: str, code: str, **popen) -> subprocess.Popen:
    """``code`` run by ``user`` inside their cgroups, as the hub's spawner starts a server."""
    account = pwd.getpwnam(user)
    become = [SETPRIV, f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups"]
    return subprocess.Popen(
        [*become, PYTHON, "-c", code], preexec_fn=lambda: cgroups.join(user, os.getpid()),
        env={"PYTHONPATH": str(REPO), "HOME": account.pw_dir, "PATH": "/usr/bin:/bin"}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **popen,
    )


def test_past_the_limit_only_that_student_loses_a_process_and_is_told_why(cgroups: StudentCgroups) -> None:
    holding = as_student(cgroups, B, "import sys\nkept = b'x' * (64 * 2**20)\nprint('holding', flush=True)\n"
                         "sys.stdin.readline()\nprint(len(kept))\n", stdin=subprocess.PIPE)
    try:
        assert holding.stdout.readline().strip() == "holding"
        greedy = as_student(cgroups, A, "chunks = [b'x' * 2**24 for _ in range(64)]\nprint('allocated 1 GiB')\n")
        output, _ = greedy.communicate(timeout=60)
        assert greedy.returncode == -9 and "allocated" not in output, (
            f"A allocated 1 GiB past a {LIMIT >> 20} MiB limit and was not stopped (exit {greedy.returncode}): "
            f"{output!r}; is the limit written in {cgroups.of(A)[0]}?"
        )
        assert oom_kills(cgroups.of(A)[0]) == 1 and oom_kills(cgroups.of(B)[0]) == 0
        kept, _ = holding.communicate("\n", timeout=30)
        assert holding.returncode == 0 and kept.strip() == str(64 * 2**20), f"B's process was hurt: {kept!r}"
    finally:
        if holding.poll() is None:
            holding.kill()
    told = as_student(cgroups, A, "from classroom.oom_notice import student_memory_cgroup, unreported_kills\n"
                      "cgroup = student_memory_cgroup()\nprint(unreported_kills(cgroup), unreported_kills(cgroup))\n")
    output, _ = told.communicate(timeout=30)
    assert output.split() == ["1", "0"], f"A's next kernel should count the kill once, then no more: {output!r}"


def test_the_cpu_quota_holds_a_busy_student_to_their_share(cgroups: StudentCgroups) -> None:
    cgroups.prepare(A, LIMIT, 0.2)
    try:
        busy = as_student(cgroups, A, "import os, time\nend = time.monotonic() + 1.5\nwhile time.monotonic() < end:\n"
                          "    pass\nprint(sum(os.times()[:2]))\n")
        output, _ = busy.communicate(timeout=60)
    finally:
        cgroups.prepare(A, LIMIT, None)
    used = float(output.split()[-1])
    throttled = dict(line.split() for line in (cgroups.of(A)[1] / "cpu.stat").read_text().splitlines())
    assert int(throttled["nr_throttled"]) > 0 and used < 0.45, (
        f"a busy loop of 1.5 s limited to 0.2 CPU used {used:.2f} s of CPU ({throttled}): the quota did not hold"
    )


TASKS = 40
FORK_BOMB = """
import errno, os, sys
started, refusal = [], 'none'
while len(started) < 10 * TASKS:  # bounded: without the limit it ends, and says it was never refused
    try:
        started.append(os.posix_spawn('/bin/sleep', ['sleep', '120'], {}))
    except OSError as error:
        refusal = errno.errorcode[error.errno]
        break
print(len(started), refusal, flush=True)
sys.stdin.readline()
for pid in started:
    os.kill(pid, 9)
""".replace("TASKS", str(TASKS))


def test_a_fork_bomb_stops_at_the_student_s_limit_and_the_others_still_start_processes(
    cgroups: StudentCgroups,
) -> None:
    cgroups.prepare(A, LIMIT, None, TASKS)
    bomb = as_student(cgroups, A, FORK_BOMB, stdin=subprocess.PIPE)
    try:
        started, refusal = bomb.stdout.readline().split()
        assert refusal == "EAGAIN" and int(started) < TASKS, (
            f"A started {started} processes under a limit of {TASKS} processes and threads, then {refusal}: "
            f"is pids.max written in {cgroups.of(A)[2]}?"
        )
        assert int((cgroups.of(A)[2] / "pids.current").read_text()) == TASKS, "A's bomb holds the whole limit"
        other = as_student(cgroups, B, "import subprocess\nprint(sum(subprocess.run(['/bin/true']).returncode == 0 "
                           "for _ in range(50)))\n")
        output, _ = other.communicate(timeout=60)
        assert output.strip() == "50", f"B could not start processes while A's fork bomb ran: {output!r}"
    finally:
        bomb.communicate("\n", timeout=60)
        cgroups.prepare(A, LIMIT, None)
    assert (cgroups.of(A)[2] / "pids.max").read_text().strip() == "max"


def test_a_student_reads_their_own_cgroup_statistics_and_no_one_else_s(cgroups: StudentCgroups) -> None:
    files = {folder / name for folder, name in zip(cgroups.of(A), ("memory.usage_in_bytes", "cpu.stat",
                                                                   "pids.current"), strict=True)}
    code = ("import sys\nfor name in sys.argv[1:]:\n    try:\n        open(name).read()\n        print('read', name)\n"
            "    except PermissionError:\n        print('refused', name)\n")
    listing = [str(cgroups.memory)]
    for user, expected in ((A, "read"), (B, "refused")):
        account = pwd.getpwnam(user)
        reader = subprocess.run(
            [SETPRIV, f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups", PYTHON, "-c", code,
             *map(str, sorted(files))], capture_output=True, text=True, timeout=60, check=True,
        )
        outcomes = {line.split(" ", 1)[0] for line in reader.stdout.splitlines()}
        assert outcomes == {expected}, f"{user} reading {A}'s cgroup files: {reader.stdout!r}"
        lister = subprocess.run([SETPRIV, f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups",
                                 "/bin/ls", *listing], capture_output=True, text=True, timeout=60)
        assert lister.returncode != 0 and "Permission denied" in lister.stderr, (
            f"{user} listed the students who have a cgroup: {lister.stdout!r}"
        )


def test_the_hub_s_settings_follow_make_hub_s_variables(cgroups: StudentCgroups, monkeypatch) -> None:
    for name in ("MEM_LIMIT", "CPU_LIMIT", "TASKS_LIMIT", "DISK_LIMIT"):
        monkeypatch.delenv(f"TFCOURSE_HUB_{name}", raising=False)
    c = Config()
    line = configure_limits(c, HubSettings())
    assert c.JupyterHub.spawner_class == "classroom.spawner.LimitedSpawner"
    assert c.Spawner.mem_limit == HubSettings.mem_limit.default_value and c.Spawner.cpu_limit == 1.0, line
    assert c.LimitedSpawner.tasks_limit == int(HubSettings.tasks_limit.default_value), line
    c = Config()
    off = {"TFCOURSE_HUB_MEM_LIMIT": "0", "TFCOURSE_HUB_CPU_LIMIT": "0", "TFCOURSE_HUB_TASKS_LIMIT": "0"}
    for name, value in {**off, "TFCOURSE_HUB_MEM_LIMIT": "3G"}.items():
        monkeypatch.setenv(name, value)
    configure_limits(c, HubSettings())
    assert c.Spawner.mem_limit == "3G" and c.Spawner.cpu_limit is None and c.LimitedSpawner.tasks_limit is None
    c = Config()
    monkeypatch.setenv("TFCOURSE_HUB_MEM_LIMIT", "0")
    line = configure_limits(c, HubSettings())
    assert line.startswith("per-student limits are off") and "spawner_class" not in c.JupyterHub


def test_without_a_writable_memory_controller_the_reason_is_said() -> None:
    nowhere = StudentCgroups(Path("/sys/fs/cgroup/no-such-controller/tfcourse-students"), Path("/nonexistent/x"),
                             Path("/nonexistent/y"))
    why_not = nowhere.unavailable()
    assert why_not and "/sys/fs/cgroup/no-such-controller/memory.limit_in_bytes" in why_not and "SystemdSpawner" in (
        why_not
    ), why_not


def test_the_memory_notice_speaks_the_student_s_edition(monkeypatch: pytest.MonkeyPatch) -> None:
    import classroom.student_view
    from classroom.oom_notice import notice

    assert notice("1 GiB").startswith("A kernel of yours") and "1 GiB" in notice("1 GiB")  # no hub view: English
    monkeypatch.setattr(classroom.student_view, "read_view", lambda: classroom.student_view.StudentView("zh"))
    told = notice("1 GiB")
    assert "内存不足" in told and "1 GiB" in told, "a zh student is told in Chinese, with their limit"
