"""``grade`` killed in the middle of a class and started again gives the grades of one run, counted once.

The instructor's ``python -m autograder grade`` is killed (SIGKILL, its own process only, as the
machine's out-of-memory killer or an impatient ``kill -9`` would) once the first student's result is
saved and the second is being graded; its workers, zygotes and kernels end with it, within seconds.
The same command then runs again. The second run must grade only what the first left ungraded, and
the gradebook must hold each student once with the scores of their own notebook: nothing lost,
nothing counted twice. It removes the temporary folder the killed run left, and says so.
"""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from nbgrader.api import Gradebook

from autograder.course.course import Course
from autograder.pipeline.storage.gradebook import sqlite_url
from autograder.pipeline.storage.results import load_result
from tests.grader.hostile_class import ASSIGNMENT, CASES, points_per_test, submit
from tests.support.course import ThrowawayCourse

pytestmark = pytest.mark.slow
STUDENTS = ("blank", "good")  # graded in this order with one job: the kill falls while "good" is graded
FIRST_RESULT_WAIT = 240  # seconds: one 01 hand-in takes 10 to 40 s on the 2-core machine, more under load
ENDED_WAIT = 30  # seconds for the killed run's processes to end (under a second measured)


def grade_command(course: Course) -> list[str]:
    return [sys.executable, "-m", "autograder", "--root", str(course.root), "grade",
            "--assignment", ASSIGNMENT, "--jobs", "1"]


def kill_after_first_result(course: Course, environment: dict[str, str]) -> list[psutil.Process]:
    """Start ``grade``; SIGKILL its process alone once one result is saved. Returns what it had started."""
    started = time.monotonic()
    process = subprocess.Popen(grade_command(course), cwd=course.root, start_new_session=True, env=environment,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = course.grading.results() / ASSIGNMENT
    descendants: list[psutil.Process] = []
    try:
        while not (results.is_dir() and any(results.glob("*.json"))):
            assert process.poll() is None, f"grade ended (exit {process.returncode}) before it could be killed"
            assert time.monotonic() - started < FIRST_RESULT_WAIT, "no result saved: grade never got going"
            time.sleep(0.2)
        descendants = psutil.Process(process.pid).children(recursive=True)
    finally:
        process.kill()
        process.wait()
    return descendants


def still_running(processes: list[psutil.Process]) -> list[str]:
    """The command lines of those of ``processes`` still running (a zombie has ended)."""
    running = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                running.append(" ".join(process.cmdline()[:4]))
        except psutil.NoSuchProcess:
            continue
    return running


def gradebook_scores(course: Course) -> dict[str, dict[str, float | None]]:
    """``{student: {grade id: auto score}}`` for every submission the gradebook holds (written answers: None)."""
    with Gradebook(sqlite_url(course.grading.gradebook)) as gb:
        submissions = gb.find_assignment(ASSIGNMENT).submissions
        return {s.student.id: {g.name: g.auto_score for nb in s.notebooks for g in nb.grades} for s in submissions}


@pytest.fixture
def short_temporary_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="restart-"))
    yield folder
    shutil.rmtree(folder)


def test_grade_killed_mid_run_and_started_again_counts_each_student_once(
    throwaway_course: ThrowawayCourse, short_temporary_folder: Path
) -> None:
    course = throwaway_course(ASSIGNMENT, name="restart", seeded=True)
    for case in CASES:
        if case.student in STUDENTS:
            submit(course, case)
    handed_in = {p: p.read_bytes() for p in course.grading.submitted().rglob("*") if p.is_file()}
    # Both runs' temporary folder, where what the killed one leaves is seen alone. A short path: a zygote's socket
    # lies three folders below it, and a Unix socket's path has at most 107 bytes (pytest's tmp_path is too long).
    temporary = short_temporary_folder
    environment = {**os.environ, "TMPDIR": str(temporary)}
    started = kill_after_first_result(course, environment)
    assert len(started) >= 3, f"grade had started {len(started)} processes: expected a worker and its zygotes"
    deadline = time.monotonic() + ENDED_WAIT
    try:
        while running := still_running(started):
            assert time.monotonic() < deadline, f"{len(running)} of the killed grade's processes still run: {running}"
            time.sleep(0.5)
    finally:  # what outlived it must not outlive the test
        for process in started:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
    left_behind = sorted(path.name for path in temporary.iterdir())
    assert len(left_behind) == 1, f"the killed run should leave its one run folder, found {left_behind}"
    left = {p: p.read_bytes() for p in course.grading.submitted().rglob("*") if p.is_file()}
    assert left == handed_in, "the killed grade changed a hand-in or left its working files among them"
    saved = sorted(p.stem for p in (course.grading.results() / ASSIGNMENT).glob("*.json"))
    assert saved == ["blank"], f"the kill should fall after blank's result and before good's; saved: {saved}"

    rerun = subprocess.run(grade_command(course), cwd=course.root, capture_output=True, text=True, timeout=600,
                           env=environment)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "removed 1 temporary folder(s) that a grade run left" in rerun.stderr and left_behind[0] in rerun.stderr, (
        f"the second run should say it removed {left_behind[0]}; it said:\n{rerun.stderr[-2000:]}"
    )
    assert not list(temporary.iterdir()), f"temporary files left after the second run: {list(temporary.iterdir())}"
    assert "1 graded in this run" in rerun.stdout, (
        f"the second run should grade only what the first left ungraded (good); it printed:\n{rerun.stdout}"
    )

    scores = gradebook_scores(course)
    points = points_per_test()
    assert sorted(scores) == sorted(STUDENTS), f"each student once in the gradebook; it holds {sorted(scores)}"
    autograded = {student: {name: scores[student][name] for name in points} for student in STUDENTS}
    assert autograded["good"] == points, f"good's notebook is the solution: full marks expected, got {scores['good']}"
    assert not any(autograded["blank"].values()), f"the untouched release scores nothing, got {scores['blank']}"
    for student in STUDENTS:
        result = load_result(course, ASSIGNMENT, student)
        assert result is not None and {t.grade_id: t.score for t in result.tests} == autograded[student], (
            f"{student}'s saved result and the gradebook disagree"
        )
