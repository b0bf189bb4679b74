"""``grade`` killed in the middle of a class and started again gives the grades of one run, counted once.

The instructor's ``python -m autograder grade`` is killed (SIGKILL, its whole process group, as a
machine losing power or an impatient Ctrl-\\ would) once the first student's result is saved and
the second is being graded; the same command then runs again. The second run must grade only
what the first left ungraded, and the gradebook must hold each student once with the scores of
their own notebook: nothing lost, nothing counted twice.
"""

import os
import signal
import subprocess
import sys
import time

import pytest
from nbgrader.api import Gradebook

from autograder.course.course import Course
from autograder.pipeline.gradebook import sqlite_url
from autograder.pipeline.results import load_result, results_directory
from tests.grader.hostile_class import ASSIGNMENT, CASES, points_per_test, submit
from tests.support.course import ThrowawayCourse

pytestmark = pytest.mark.slow
STUDENTS = ("blank", "good")  # graded in this order with one job: the kill falls while "good" is graded
FIRST_RESULT_WAIT = 240  # seconds: one 01 hand-in takes 10 to 40 s on the 2-core machine, more under load


def grade_command(course: Course) -> list[str]:
    return [sys.executable, "-m", "autograder", "--root", str(course.root), "grade",
            "--assignment", ASSIGNMENT, "--jobs", "1"]  # fmt: skip


def kill_after_first_result(course: Course) -> float:
    """Start ``grade``; SIGKILL its process group once one result is saved. Returns the seconds it ran."""
    started = time.monotonic()
    process = subprocess.Popen(grade_command(course), cwd=course.root, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    results = results_directory(course) / ASSIGNMENT
    try:
        while not (results.is_dir() and any(results.glob("*.json"))):
            assert process.poll() is None, f"grade ended (exit {process.returncode}) before it could be killed"
            assert time.monotonic() - started < FIRST_RESULT_WAIT, "no result saved: grade never got going"
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return time.monotonic() - started


def gradebook_scores(course: Course) -> dict[str, dict[str, float | None]]:
    """``{student: {grade id: auto score}}`` for every submission the gradebook holds (written answers: None)."""
    with Gradebook(sqlite_url(course.grading.gradebook)) as gb:
        submissions = gb.find_assignment(ASSIGNMENT).submissions
        return {s.student.id: {g.name: g.auto_score for nb in s.notebooks for g in nb.grades} for s in submissions}


def test_grade_killed_mid_run_and_started_again_counts_each_student_once(throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course(ASSIGNMENT, name="restart", seeded=True)
    for case in CASES:
        if case.student in STUDENTS:
            submit(course, case)
    handed_in = {p: p.read_bytes() for p in course.grading.submitted().rglob("*") if p.is_file()}
    kill_after_first_result(course)
    left = {p: p.read_bytes() for p in course.grading.submitted().rglob("*") if p.is_file()}
    assert left == handed_in, "the killed grade changed a hand-in or left its working files among them"
    saved = sorted(p.stem for p in (results_directory(course) / ASSIGNMENT).glob("*.json"))
    assert saved == ["blank"], f"the kill should fall after blank's result and before good's; saved: {saved}"

    rerun = subprocess.run(grade_command(course), cwd=course.root, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
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

