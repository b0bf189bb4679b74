"""The documented grading commands, run as the instructor's guide spells them, on a fresh copy of the course.

The grading block (in ``docs/instructors.md``; the test reads it from whichever page of the README and
``docs/`` holds it) runs from the repository root with the venv's Python and no PATH set-up;
every command takes ``--root COURSE_FOLDER``. The test runs each line of the block in order,
through ``shlex.split``, from a throw-away course (every notebook, with the venv linked in
as ``.venv`` and a Canvas-style LMS download: one student hands in notebooks 01 and 02 with
the reference answers, another notebook 01 untouched), with
PATH holding only the system folders, and with one change: ``--root .`` after ``-m autograder``,
so that the repository's own ``grading/`` stays untouched.

Two notebooks are enough to run every command over more than one assignment; that every
notebook's reference answers score full marks through the whole pipeline is proved once per
notebook by ``test_every_notebook.py``, whose class already holds them.
"""

import os
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from autograder.course.course import Course
from autograder.course.notebooks import fill_answers, is_graded_test_cell, nbgrader_meta, reference_answers
from autograder.course.settings import REPO_ROOT, assignment_ids, release_notebook, source_notebook
from tests.support.course import ThrowawayCourse

DOCUMENTATION = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
STEPS = ["collect", "sanitize", "grade", "feedback", "export", "report", "similarity"]
GOOD, BLANK = "goodstudent", "blankstudent"
HANDED_IN = assignment_ids()[:2]


def handed_in() -> dict[tuple[str, str], nbformat.NotebookNode]:
    """``(student, assignment) -> notebook``: the reference answers of 01 and 02, and 01 untouched."""
    notebooks = {}
    for assignment in HANDED_IN:
        release = nbformat.read(release_notebook(assignment), as_version=4)
        source = nbformat.read(source_notebook(assignment), as_version=4)
        notebooks[GOOD, assignment] = fill_answers(release, reference_answers(source))
    first = assignment_ids()[0]
    notebooks[BLANK, first] = nbformat.read(release_notebook(first), as_version=4)
    return notebooks


def autograded_points(assignment: str) -> float:
    source = nbformat.read(source_notebook(assignment), as_version=4)
    return sum(nbgrader_meta(cell)["points"] for cell in source.cells if is_graded_test_cell(cell))


def readme_grading_commands() -> list[str]:
    """The lines of the documentation's code block that runs the grader, without their comments."""
    blocks = [b for page in DOCUMENTATION for b in re.findall(r"```bash\n(.*?)```", page.read_text(), re.S)]
    block = next(b for b in blocks if all(f"-m autograder {step}" in b for step in STEPS))
    return [line.split(" #")[0].strip() for line in block.splitlines() if line.strip()]


def fresh_course(course: Course) -> Course:
    """A throw-away course of every notebook, with this session's venv as ``.venv`` and an LMS download."""
    (course.root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    canvas_user_ids = {GOOD: 11, BLANK: 12}  # Canvas names a file sortablename_userid_fileid_name: one id a student
    with zipfile.ZipFile(course.root / "lms_download.zip", "w") as download:
        for number, ((student, assignment), notebook) in enumerate(handed_in().items()):
            name = f"{student}_{canvas_user_ids[student]}_{100 + number}_{assignment}.ipynb"
            download.writestr(name, nbformat.writes(notebook))
    return course


@pytest.mark.slow
def test_every_readme_grading_command_runs_as_written(throwaway_course: ThrowawayCourse) -> None:
    commands = readme_grading_commands()
    assert [shlex.split(c)[3] for c in commands] == STEPS, f"the documented grading block changed: {commands}"
    assert all(c.startswith(".venv/bin/python -m autograder ") for c in commands)
    course = fresh_course(throwaway_course(*assignment_ids(), name="clone", seeded=True))
    bare_path = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")} | {"PATH": bare_path}
    printed = {}
    for command, step in zip(commands, STEPS, strict=True):
        python, module, package, *rest = shlex.split(command)
        argv = [python, module, package, "--root", ".", *rest]
        result = subprocess.run(argv, cwd=course.root, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"`{command}` failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
        printed[step] = result.stdout

    submissions = handed_in()
    assert f"{len(submissions)} collected, 0 unmatched, 0 unreadable" in printed["collect"]
    for student, assignment in submissions:
        assert (course.grading.feedback(student, assignment) / f"{assignment}.html").is_file()
    grades = pd.read_csv(course.grading.file("grades.csv")).set_index(["student", "assignment"])
    # Graded at full marks by the course's own pipeline (sandbox, zygotes, clean re-run).
    scores = {a: (grades.loc[(GOOD, a), "autograded_score"], grades.loc[(GOOD, a), "status"]) for a in HANDED_IN}
    assert scores == {a: (autograded_points(a), "graded") for a in HANDED_IN}
    assert grades.loc[(BLANK, assignment_ids()[0]), "autograded_score"] == 0
    report = (course.root / "report.html").read_text()
    assert "<img" in report or "<svg" in report
