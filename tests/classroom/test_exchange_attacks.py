"""A malicious student against the hub's exchange, as real system users, with nbgrader's own commands.

The layout is ``classroom.provision``'s (the hub test's prefix; its environment is kept). Every
command runs as its user's system account, with the environment that user's server gives it (the
hub environment's programs, the role's Jupyter settings), as from a terminal on the hub. The
instructor releases 01; Ada (the victim) fetches and hands in; Mal (the attacker) tries each
attack of issue 30, and some a careful attacker tries next; Cy hands in late and forges the time.
The instructor collects with ``nbgrader collect`` (the course's collect, as formgrader's button
uses it) and releases feedback with ``nbgrader release_feedback``. Then: what Ada fetched, what
was collected for her and the feedback page she fetched are byte for byte what they should be,
Mal reads and plants nothing, and every forged or linked hand-in is refused and listed.

Each student's trouble stays theirs: students of their own accounts hand in folders made by hand
that lack a file nbgrader's later steps expect, or hold a folder where a file belongs (issue 43);
collect refuses those whose feedback could not travel back and takes the others, and release
feedback skips each malformed feedback folder (as an older collect or a hand-made page leaves
them), releases every other student's page, exits 1 and never prints a page's name.

Root only (it makes system users): elsewhere it skips and says why.
"""

import json
import os
import pwd
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from nbgrader.utils import notebook_hash

from autograder.course.deadlines import submitted_at
from autograder.pipeline.exchange.submission_marks import SECRET_FILE
from autograder.pipeline.storage.refusals import load_refusals
from classroom.layout import COURSE_ID, INSTRUCTORS, STUDENTS, HubLayout
from classroom.provision import provision
from classroom.system_users import ensure_user, remove_user
from testbed.hub import HUB_MODULE_TIMEOUT, fresh_layout

pytestmark = [pytest.mark.slow, pytest.mark.timeout(HUB_MODULE_TIMEOUT)]
ASSIGNMENT = "01_attention"
TEACHER, ADA, MAL, CY = "tfx-teacher", "tfx-ada", "tfx-mal", "tfx-cy"
ZOE = "tfx-zoe"  # honest, and last in the class list: after every malformed hand-in and feedback folder
# Hand-ins made by hand in the inbound, each by a student of its own account: what it lacks or misplaces (Python run
# as the student, `d` the hand-in folder), and the reason collect refuses it ("" where it is collected).
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
MARKS = f"open(d + '/{NOTEBOOK}', 'w').write('{{}}'); open(d + '/{SECRET_FILE}', 'w').write(os.urandom(64).hex())\n"
FAMILIES = {
    "tfx-nostamp": ("no timestamp.txt", f"os.mkdir(d)\n{MARKS}", ""),
    "tfx-nosecret": ("no submission_secret.txt", f"os.mkdir(d)\n{MARKS}os.remove(d + '/{SECRET_FILE}')",
                     "no submission_secret.txt"),
    "tfx-nonb": ("the notebook missing", f"os.mkdir(d)\n{MARKS}os.remove(d + '/{NOTEBOOK}')", ""),
    "tfx-nbdir": ("a folder named like the notebook", f"os.mkdir(d)\n{MARKS}os.remove(d + '/{NOTEBOOK}')\n"
                  f"os.mkdir(d + '/{NOTEBOOK}')", "is a folder where a notebook belongs"),
    "tfx-stampdir": ("timestamp.txt a folder", f"os.mkdir(d)\n{MARKS}os.mkdir(d + '/timestamp.txt')",
                     "timestamp.txt is a folder"),
    "tfx-notdir": ("a file where the hand-in folder belongs", "open(d, 'w').write('{}')", "not a folder"),
}
# Feedback folders release feedback must skip (grading/feedback/<student>/01_attention, made as the instructor): each
# family's as nbgrader's own collect would have let it through, written as the course's feedback step writes pages.
BROKEN_FEEDBACK = {
    "tfx-nosecret": (
        "no submission_secret.txt",
        "shutil.rmtree(f + '/submission_secret.txt', True)\n"
        "os.path.isfile(f + '/submission_secret.txt') and os.remove(f + '/submission_secret.txt')",
    ),
    "tfx-nbdir": ("the page a folder", f"os.remove(f + '/{ASSIGNMENT}.html'); os.mkdir(f + '/{ASSIGNMENT}.html')"),
    "tfx-stampdir": ("timestamp.txt a folder", "os.remove(f + '/timestamp.txt'); os.mkdir(f + '/timestamp.txt')"),
    "tfx-notdir": ("a file where the feedback folder belongs", "shutil.rmtree(f); open(f, 'w').write('x')"),
}
FUTURE = "2099-01-01 00:00:00.000000 UTC"  # a literal --Exchange.timestamp_format: the time the attacker claims
PAST = "2000-01-01 00:00:00.000000 UTC"
DEBRIS = 21  # empty folders Mal makes under Ada's name: one more than collect looks at of one student (max_handins)
TAMPERED = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "tampered": true}'


@dataclass
class Run:
    layout: HubLayout
    outcomes: dict[str, str] = field(default_factory=dict)  # attack -> what the attacker got
    outputs: dict[str, str] = field(default_factory=dict)  # command name -> its output
    exit_codes: dict[str, int] = field(default_factory=dict)  # command name -> its exit status (some only)
    seconds: float = 0.0
    last_exit: int = 0  # the exit status of the latest command

    @property
    def course_exchange(self) -> Path:
        return self.layout.exchange / COURSE_ID

    def env(self, user: str) -> dict[str, str]:
        """What the user's server would give a terminal: the hub's programs, the role's settings."""
        role = "instructor" if user == TEACHER else "student"
        home = pwd.getpwnam(user).pw_dir
        config = [str(self.layout.role_config(role)), str(self.layout.role_config("common"))]
        env = {"HOME": home, "USER": user, "LOGNAME": user, "LANG": "C.UTF-8",
               "PATH": f"{self.layout.env / 'bin'}:/usr/bin:/bin",
               "JUPYTER_CONFIG_PATH": os.pathsep.join(config)}
        if role == "instructor":
            env["PYTHONPATH"] = str(self.layout.course)
        return env

    def as_user(self, user: str, argv: list[str], cwd: str | None = None, check: bool = True) -> str:
        groups = [g.gr_gid for g in __import__("grp").getgrall() if user in g.gr_mem]
        done = subprocess.run(
            argv, cwd=cwd or pwd.getpwnam(user).pw_dir, env=self.env(user), user=user,
            group=pwd.getpwnam(user).pw_gid, extra_groups=groups, capture_output=True, text=True, timeout=180,
        )
        output = done.stdout + done.stderr
        self.last_exit = done.returncode
        if check and done.returncode:
            raise AssertionError(f"{user}: {' '.join(argv)} exited {done.returncode}:\n{output[-3000:]}")
        return output

    def nbgrader(self, user: str, *args: str, check: bool = True) -> str:
        cwd = str(self.layout.course) if user == TEACHER else None
        return self.as_user(user, [str(self.layout.env / "bin" / "nbgrader"), *args], cwd=cwd, check=check)

    def attempt(self, name: str, user: str, code: str) -> str:
        """Python run as ``user``: 'done', or the name of the error that stopped it."""
        wrapped = (f"try:\n{indent(code)}\n    print('done')\n"
                   "except OSError as error:\n    print(type(error).__name__)\n")
        outcome = self.as_user(user, [str(self.layout.python), "-c", wrapped]).strip().splitlines()[-1]
        self.outcomes[name] = outcome
        return outcome


def indent(code: str) -> str:
    return "\n".join("    " + line for line in code.splitlines())


def handins(run: Run, student: str) -> list[Path]:
    """The student's hand-in folders in the inbound (as root, who may list it)."""
    return sorted((run.course_exchange / "inbound").glob(f"{student}+{ASSIGNMENT}+*"))


def clear_inbound(run: Run, student: str) -> str:
    """``make hub-clear-inbound STUDENT=student``'s command, as root: what it printed."""
    command = [sys.executable, "-m", "classroom.clear_inbound", "--prefix", str(run.layout.prefix)]
    command += ["--student", student]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def attacked() -> Iterator[Run]:
    if os.geteuid() != 0:
        pytest.skip("the exchange attack test creates system users and runs as each of them: root only (CI is root)")
    users = {TEACHER: INSTRUCTORS, ADA: STUDENTS, MAL: STUDENTS, CY: STUDENTS, ZOE: STUDENTS,
             **dict.fromkeys(FAMILIES, STUDENTS)}
    for user in users:
        remove_user(user)
    layout = fresh_layout()
    try:
        for user, group in users.items():
            ensure_user(user, group)
        provision(layout, [TEACHER], refresh_course=True)
        run = Run(layout)
        started = time.monotonic()
        play(run)
        run.seconds = round(time.monotonic() - started, 1)
        yield run
    finally:
        for user in users:
            remove_user(user)


def play(run: Run) -> None:
    exchange, course = run.course_exchange, run.layout.course
    solution = course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    # 1. Before the first release: plant the assignment and a package beside it.
    planted = exchange / "outbound" / ASSIGNMENT
    run.attempt("1: plant outbound/01 before the release", MAL,
                f"import os\nos.makedirs({str(planted / 'tfcourse')!r})\n"
                f"open({str(planted / (ASSIGNMENT + '.ipynb'))!r}, 'w').write({TAMPERED!r})")
    run.attempt("1: replace the exchange's course folder before the release", MAL,
                f"import os\nos.rename({str(exchange)!r}, {str(exchange) + '-gone'!r})")
    run.outputs["release"] = run.nbgrader(TEACHER, "release_assignment", ASSIGNMENT, "--force")
    # 2. After the release: swap the course folder, or write into what others fetch.
    run.attempt("2: rename the course folder away", MAL,
                f"import os\nos.rename({str(exchange)!r}, {str(exchange) + '-mine'!r})")
    run.attempt("2: rename outbound away", MAL,
                f"import os\nos.rename({str(exchange / 'outbound')!r}, {str(exchange / 'x')!r})")
    run.attempt("2: add a package to the released folder", MAL,
                f"import os\nos.makedirs({str(planted / 'tfcourse')!r})")
    run.attempt("2: overwrite the released notebook", MAL,
                f"open({str(planted / (ASSIGNMENT + '.ipynb'))!r}, 'w').write('x')")
    for student in (ADA, MAL, CY, ZOE):
        run.nbgrader(student, "fetch_assignment", ASSIGNMENT)
    run.outputs["ada submit"] = run.nbgrader(ADA, "submit", ASSIGNMENT)
    run.outputs["zoe submit"] = run.nbgrader(ZOE, "submit", ASSIGNMENT)
    ada_folder = handins(run, ADA)[0]  # the attacker is given its full name: a leaked log, the worst case
    # 3. Impersonation, dated in the future, with nbgrader's own submit (the attacker's config may drop ours).
    mal_notebook = Path(pwd.getpwnam(MAL).pw_dir) / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    run.as_user(MAL, [str(run.layout.python), "-c", f"open({str(mal_notebook)!r}, 'w').write({TAMPERED!r})"])
    run.outputs["mal submit as ada"] = run.nbgrader(
        MAL, "submit", ASSIGNMENT, f"--student={ADA}", f"--Exchange.timestamp_format={FUTURE}",
        "--ExchangeFactory.submit=nbgrader.exchange.default.submit.ExchangeSubmit",
    )
    # Ada's own hand-in, its name known: read her secret, replace or remove the hand-in.
    run.attempt("3: read Ada's submission secret", MAL, f"open({str(ada_folder / 'submission_secret.txt')!r}).read()")
    run.attempt("3: replace Ada's notebook", MAL,
                f"open({str(ada_folder / (ASSIGNMENT + '.ipynb'))!r}, 'w').write({TAMPERED!r})")
    run.attempt("3: rename Ada's hand-in away", MAL,
                f"import os\nos.rename({str(ada_folder)!r}, {str(ada_folder) + '-x'!r})")
    run.attempt("list the inbound folder", MAL, f"import os\nos.listdir({str(exchange / 'inbound')!r})")
    # 3b. Debris under Ada's name, newer than her hand-in: more folders than collect looks at of one student.
    debris = [exchange / "inbound" / f"{ADA}+{ASSIGNMENT}+{FUTURE}+d{index:02}" for index in range(DEBRIS)]
    run.attempt("3: make empty folders named for Ada", MAL,
                "import os\n" + "\n".join(f"os.mkdir({str(folder)!r})" for folder in debris))
    run.attempt("3: the instructor removes a folder Mal made for Ada", TEACHER,
                f"import os\nos.rmdir({str(debris[0])!r})")
    # 4. Forged time: Cy hands in now, claims 2000 in the name, then edits timestamp.txt
    # (nbgrader's own submit, which logs the folder's name).
    cy_log = run.nbgrader(CY, "submit", ASSIGNMENT, f"--Exchange.timestamp_format={PAST}",
                          "--ExchangeFactory.submit=nbgrader.exchange.default.submit.ExchangeSubmit")
    run.outputs["cy submit"] = cy_log
    cy_folder = handins(run, CY)[0]
    run.attempt("4: edit the own timestamp.txt", CY, f"open({str(cy_folder / 'timestamp.txt')!r}, 'w').write({PAST!r})")
    # 6. Links and special files in a hand-in made by hand in the inbound (nbgrader's submit would follow them).
    inbound = exchange / "inbound"
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    kinds = {
        "link to the solution": f"os.symlink({str(solution)!r}, d + '/{ASSIGNMENT}.ipynb')",
        "link to the solutions folder": f"os.symlink({str(solution.parent)!r}, d + '/sol')",
        "hard link to the solution": f"os.link({str(solution)!r}, d + '/{ASSIGNMENT}.ipynb')",
        "named pipe": f"open(d + '/{ASSIGNMENT}.ipynb', 'w').write('{{}}'); os.mkfifo(d + '/pipe')",
        "name with a newline": f"open(d + '/{ASSIGNMENT}.ipynb', 'w').write('{{}}'); open(d + '/x\\nINFO ok', 'w')",
        "hand-in folder that is a link": f"os.rmdir(d); os.symlink({str(ada_folder)!r}, d)",
    }
    for index, (kind, make) in enumerate(kinds.items()):
        folder = inbound / f"{MAL}+{ASSIGNMENT}+{stamp}+k{index}"
        run.attempt(f"6: hand in a {kind}", MAL, f"import os\nd = {str(folder)!r}\nos.mkdir(d)\n{make}")
    # 7. Missing or misplaced files, each in a hand-in of a student's own (issue 43).
    for index, (student, (what, make, _)) in enumerate(FAMILIES.items()):
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+f{index}"
        run.attempt(f"7: hand in {what}", student, f"import os\nd = {str(folder)!r}\n{make}")
    # A hand-in that changes while collect runs: a file swapped with a link to the solution, again and again.
    racer = inbound / f"{MAL}+{ASSIGNMENT}+{stamp}+race"
    swap = (f"import os, time\nd = {str(racer)!r}\nos.mkdir(d)\nf = d + '/{ASSIGNMENT}.ipynb'\n"
            f"open(d + '/{SECRET_FILE}', 'w').write(os.urandom(64).hex())\n"  # else refused for its missing secret
            f"end = time.time() + 20\nwhile time.time() < end:\n"
            f"    open(f + '.t', 'w').write('PLAIN'); os.replace(f + '.t', f)\n"
            f"    os.symlink({str(solution)!r}, f + '.l'); os.replace(f + '.l', f)\n")
    racing = subprocess.Popen([str(run.layout.python), "-c", swap], env=run.env(MAL), user=MAL,
                              cwd=pwd.getpwnam(MAL).pw_dir)
    time.sleep(1)
    try:
        run.outputs["collect"] = run.nbgrader(TEACHER, "collect", ASSIGNMENT, "--update")
    finally:
        racing.kill()
        racing.wait()
    run.outputs["mal's debris before"] = "\n".join(sorted(p.name for p in handins(run, ADA) if p.owner() == MAL))
    run.outputs["clear inbound cy"] = clear_inbound(run, CY)  # neither named for Cy nor made by Cy: nothing
    run.outputs["clear inbound mal"] = clear_inbound(run, MAL)
    # 5. Feedback: the instructor writes a page for each collected hand-in with a notebook (as `python -m autograder
    # feedback` lays it out: the page, and the marks of the submission that are files), and broken feedback folders.
    for student in (ADA, CY, "tfx-nostamp", ZOE):
        write_feedback(run, student, PAGES.get(student, f"<p>{student}: 16 / 16</p>"))
    for student, (_, make) in BROKEN_FEEDBACK.items():
        write_feedback(run, student, f"<p>{student}: 16 / 16</p>", make)
    run.outputs["release feedback"] = run.nbgrader(TEACHER, "release_feedback", ASSIGNMENT, check=False)
    run.exit_codes["release feedback"] = run.last_exit
    run.attempt("5: list the feedback folder", MAL, f"import os\nos.listdir({str(exchange / 'feedback')!r})")
    run.attempt("5: plant a feedback page", MAL,
                f"open({str(exchange / 'feedback' / ('0' * 64 + '.html'))!r}, 'w').write('<p>0 / 16</p>')")
    run.outputs["ada fetch feedback"] = run.nbgrader(ADA, "fetch_feedback", ASSIGNMENT)
    run.outputs["cy fetch feedback"] = run.nbgrader(CY, "fetch_feedback", ASSIGNMENT)
    run.outputs["zoe fetch feedback"] = run.nbgrader(ZOE, "fetch_feedback", ASSIGNMENT)
    run.outputs["mal fetch feedback as ada"] = run.nbgrader(MAL, "fetch_feedback", ASSIGNMENT, f"--student={ADA}")


PAGES = {ADA: "<p>Ada: 16 / 16</p>"}


def write_feedback(run: Run, student: str, page: str, make: str = "") -> None:
    """As the instructor: ``grading/feedback/<student>/01_attention`` with ``page`` and the submission's marks that
    are files (a fresh secret and time where nothing was collected), then ``make`` (Python, ``f`` the folder)."""
    course = run.layout.course
    submitted = course / "grading" / "submitted" / student / ASSIGNMENT
    feedback = course / "grading" / "feedback" / student / ASSIGNMENT
    run.as_user(TEACHER, [str(run.layout.python), "-c",
                          f"import os, shutil\nf = {str(feedback)!r}\ns = {str(submitted)!r}\nos.makedirs(f)\n"
                          f"open(f + '/{ASSIGNMENT}.html', 'w').write({page!r})\n"
                          f"for name in ('timestamp.txt', '{SECRET_FILE}'):\n"
                          f"    if os.path.isfile(s + '/' + name):\n        shutil.copy(s + '/' + name, f)\n"
                          f"    elif not os.path.isdir(s):\n        open(f + '/' + name, 'w').write('{'cd' * 64}')\n"
                          f"{make}\n"])


def test_nothing_planted_before_or_after_the_release_reaches_another_student(attacked: Run) -> None:
    tried = {name: outcome for name, outcome in attacked.outcomes.items() if name.startswith(("1:", "2:"))}
    assert len(tried) == 6 and all(outcome == "PermissionError" for outcome in tried.values()), tried
    assert "Released as" in attacked.outputs["release"], attacked.outputs["release"]
    release = attacked.layout.course / "notebooks" / ASSIGNMENT
    fetched = Path(pwd.getpwnam(ADA).pw_dir) / ASSIGNMENT
    extra = {p.name for p in fetched.iterdir()} - {p.name for p in release.iterdir()}
    assert extra == {"feedback"}, f"Ada fetched more than the release (her feedback came later): {extra}"
    for path in release.iterdir():
        assert (fetched / path.name).read_bytes() == path.read_bytes(), f"Ada fetched a changed {path.name}"


def test_a_hand_in_as_another_student_is_refused_and_the_victim_s_counts(attacked: Run) -> None:
    course = attacked.layout.course
    collected = course / "grading" / "submitted" / ADA / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    own = Path(pwd.getpwnam(ADA).pw_dir) / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert collected.read_bytes() == own.read_bytes(), "what was collected for Ada is not what Ada handed in"
    refusals = load_refusals(course / "grading")
    assert [r for r in refusals if r.student == ADA] == [], "what Mal made under Ada's name is no trouble of Ada's"
    (made,) = [r for r in refusals if r.found == f"{ADA}+{ASSIGNMENT}+(made by {MAL})"]
    assert made.student == MAL and made.reason.startswith(
        f"{DEBRIS + 1} hand-in folder(s) named for {ADA} were made by the account {MAL}, not {ADA}'s: refused"
    ), made  # his nbgrader submit as Ada, and the empty folders
    assert f"naming {MAL} ({ADA}+{ASSIGNMENT}+(made by {MAL}))" in attacked.outputs["collect"]
    for attack in ("3: read Ada's submission secret", "3: replace Ada's notebook", "3: rename Ada's hand-in away",
                   "list the inbound folder"):
        assert attacked.outcomes[attack] == "PermissionError", (attack, attacked.outcomes[attack])


def test_folders_made_under_another_s_name_are_removed_by_root_and_nothing_else(attacked: Run) -> None:
    assert attacked.outcomes["3: make empty folders named for Ada"] == "done"  # the attack itself went through
    assert attacked.outcomes["3: the instructor removes a folder Mal made for Ada"] == "PermissionError"
    assert len(attacked.outputs["mal's debris before"].splitlines()) == DEBRIS + 1, attacked.outputs
    assert "0 entries removed from the inbound" in attacked.outputs["clear inbound cy"], attacked.outputs
    output = attacked.outputs["clear inbound mal"]
    assert f"{DEBRIS + 1} entries removed from the inbound (--student {MAL})" in output, output
    assert output.count(f"removed {ADA}+{ASSIGNMENT}+") == DEBRIS + 1 and f"(made by {MAL}, not by {ADA})" in output
    inbound = attacked.course_exchange / "inbound"
    makers = {entry.name: pwd.getpwuid(entry.lstat().st_uid).pw_name for entry in inbound.iterdir()}
    assert all(name.split("+")[0] == maker for name, maker in makers.items()), makers
    assert [name for name in makers if name.startswith(f"{ADA}+")] == [handins(attacked, ADA)[0].name]
    assert len([name for name in makers if name.startswith(f"{MAL}+")]) == 7, "Mal's own hand-ins stay for collect"


def test_the_hand_in_time_is_the_server_s(attacked: Run) -> None:
    assert attacked.outcomes["4: edit the own timestamp.txt"] == "done"  # the attack itself went through
    taken = submitted_at(attacked.layout.course / "grading" / "submitted" / CY / ASSIGNMENT)
    assert taken is not None and abs((datetime.now(UTC) - taken).total_seconds()) < 900, taken


def test_feedback_reaches_only_its_student(attacked: Run) -> None:
    for attack in ("5: list the feedback folder", "5: plant a feedback page"):
        assert attacked.outcomes[attack] == "PermissionError", (attack, attacked.outcomes[attack])
    pages = list((Path(pwd.getpwnam(ADA).pw_dir) / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
    assert len(pages) == 1 and pages[0].read_text() == "<p>Ada: 16 / 16</p>", pages
    assert not list((Path(pwd.getpwnam(MAL).pw_dir) / ASSIGNMENT).glob("feedback/*/*")), "Mal fetched a page"


def test_links_and_special_files_are_refused_and_the_solution_never_collected(attacked: Run) -> None:
    course = attacked.layout.course
    solution = (course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()
    assert attacked.outcomes["6: hand in a hard link to the solution"] == "PermissionError"
    made = [k for k, outcome in attacked.outcomes.items() if k.startswith("6:") and outcome == "done"]
    assert len(made) == 5, attacked.outcomes
    refused = {r.found.rsplit("+", 1)[1]: r.reason for r in load_refusals(course / "grading") if r.student == MAL}
    assert {"k0", "k1", "k3", "k4", "k5"} <= set(refused), refused
    collected = course / "grading" / "submitted" / MAL / ASSIGNMENT
    for path in collected.rglob("*"):
        assert not path.is_symlink() and (path.is_dir() or path.read_bytes() != solution), path


def test_no_log_names_a_hand_in_s_random_part(attacked: Run) -> None:
    ada_random = handins(attacked, ADA)[0].name.rsplit("+", 1)[1]
    for name, output in attacked.outputs.items():
        assert ada_random not in output, f"{name} printed Ada's hand-in folder: {output[-1000:]}"
    assert f"{ADA}+{ASSIGNMENT}+" in attacked.outputs["ada submit"]  # the log still says where it went


def test_each_missing_or_misplaced_file_costs_its_own_student_only(attacked: Run) -> None:
    course = attacked.layout.course
    made = {attack: outcome for attack, outcome in attacked.outcomes.items() if attack.startswith("7:")}
    assert len(made) == len(FAMILIES) and set(made.values()) == {"done"}, made
    refused = {r.student: r.reason for r in load_refusals(course / "grading") if r.student in FAMILIES}
    for student, (what, _, reason) in FAMILIES.items():
        collected = (course / "grading" / "submitted" / student / ASSIGNMENT).is_dir()
        if reason:
            assert not collected and reason in refused.get(student, ""), f"{what}: expected refused ({reason!r}), " \
                f"got collected={collected}, refusal {refused.get(student)!r}"
        else:
            assert collected and student not in refused, f"{what}: expected collected, got {refused.get(student)!r}"
    assert submitted_at(course / "grading" / "submitted" / "tfx-nostamp" / ASSIGNMENT) is not None, "no server time"
    zoe = course / "grading" / "submitted" / ZOE / ASSIGNMENT / NOTEBOOK
    own = Path(pwd.getpwnam(ZOE).pw_dir) / ASSIGNMENT / NOTEBOOK
    assert zoe.read_bytes() == own.read_bytes(), "Zoe, listed after every malformed hand-in, was not collected whole"


def page_names(run: Run, *students: str) -> set[str]:
    """The names the released pages of these collected students have in the exchange (as root, who reads secrets)."""
    submitted = run.layout.course / "grading" / "submitted"
    secrets = [(submitted / student / ASSIGNMENT / SECRET_FILE).read_text() for student in students]
    return {f"{notebook_hash(secret=secret, notebook_id=ASSIGNMENT)}.html" for secret in secrets}


def test_release_feedback_skips_each_broken_folder_and_every_other_student_gets_theirs(attacked: Run) -> None:
    output = attacked.outputs["release feedback"]
    assert attacked.exit_codes["release feedback"] == 1, f"expected exit 1 (students skipped):\n{output}"
    for student, (what, _) in BROKEN_FEEDBACK.items():
        assert f"Skipped the feedback of '{student}'" in output, f"{what}: not said to be skipped:\n{output}"
    assert f"skipped {len(BROKEN_FEEDBACK)}:" in output and "Traceback" not in output, output
    released = {page.name for page in (attacked.course_exchange / "feedback").iterdir()}
    assert released == page_names(attacked, ADA, CY, "tfx-nostamp", ZOE), output  # skipped ones: nothing half-copied
    for student in (CY, ZOE):  # Ada's: test_feedback_reaches_only_its_student
        pages = (Path(pwd.getpwnam(student).pw_dir) / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html")
        assert [page.read_text() for page in pages] == [f"<p>{student}: 16 / 16</p>"], f"{student} fetched no page"


def test_no_output_names_a_feedback_page(attacked: Run) -> None:
    names = [page.stem for page in (attacked.course_exchange / "feedback").iterdir()]
    assert len(names) == 4, names
    for command, output in attacked.outputs.items():
        shown = [name for name in names if name in output]
        assert not shown and "released to" not in output, f"{command} printed a feedback page's name:\n{output}"


def test_the_attacks_took_their_time(attacked: Run) -> None:
    print(f"exchange attacks: {attacked.seconds} s; what each attack got:\n{json.dumps(attacked.outcomes, indent=1)}")
    assert shutil.which("nbgrader", path=str(attacked.layout.env / "bin")) and attacked.seconds > 0
