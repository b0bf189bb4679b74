"""The instructor's command line as the README spells it: no PATH set-up, repeated flags add up, --root before or
after the command, the limits' defaults in --help."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.cli import parser
from autograder.course.settings import REPO_ROOT
from autograder.launch.limits import Limits
from tests.support.course import ThrowawayCourse


def test_repeated_student_and_assignment_flags_add_up() -> None:
    args = parser().parse_args(["grade", "--student", "ann", "--student", "bob", "cy", "--assignment", "01_attention"])
    assert args.student == ["ann", "bob", "cy"] and args.assignment == ["01_attention"]
    assert parser().parse_args(["grade"]).student is None  # no flag: every student


def test_root_and_the_grading_folder_before_or_after_the_command() -> None:
    for argv in (
        ["--root", "/course", "grade"],
        ["grade", "--root", "/course"],
        ["--root", "/x", "sanitize", "--root=/course"],
    ):
        assert parser().parse_args(argv).root == Path("/course"), argv
    args = parser().parse_args(["export", "--grading-directory", "term2", "--output", "g.csv"])
    assert (args.root, args.grading_directory) == (REPO_ROOT, "term2")  # the defaults stay where nothing was given


def test_grade_help_shows_the_limits_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["grade", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())

    def described(option: str) -> str:
        return help_text.split(f" {option} ", 1)[1].split(" --", 1)[0]

    assert "GiB" in described("--memory MEMORY") and "default: 4)" in described("--memory MEMORY")
    assert Limits.memory_bytes == 4 * 2**30
    assert f"default: {Limits.wall_seconds:g})" in described("--timeout TIMEOUT")
    assert f"default: {Limits.cell_timeout})" in described("--cell-timeout CELL_TIMEOUT")
    assert "default: 2)" in described("--jobs JOBS")


def test_grade_runs_from_the_venv_python_without_its_bin_on_path(throwaway_course: ThrowawayCourse) -> None:
    # nbgrader starts `alembic` by name when it creates the gradebook; the CLI must find its own copy.
    assignment = "01_attention"
    course = throwaway_course(assignment)
    bare_path = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "--root", str(course.root), "grade", "--assignment", assignment],
        cwd=course.root, env={**os.environ, "PATH": bare_path}, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "0 graded in this run" in result.stdout
    assert course.grading.gradebook.exists()


def test_the_command_line_imports_only_what_the_command_needs() -> None:
    # Each command imports its own modules when it runs (autograder/cli.py): building the parser, as
    # every command does first, must not wait for pandas, seaborn, copydetect, torch or the grader.
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "autograder", "--help"],
                            capture_output=True, text=True, timeout=120)
    lines = result.stderr.splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time")}
    steps = ("grade", "feedback", "export", "report", "sanitize")
    heavy = {"pandas", "seaborn", "copydetect", "torch", "autograder.similarity.command",
             *(f"autograder.pipeline.commands.{step}" for step in steps)}
    assert result.returncode == 0 and "similarity" in result.stdout, result.stderr[-2000:]
    assert "autograder.cli" in imported and not heavy & imported, sorted(heavy & imported)
