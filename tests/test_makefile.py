"""The Makefile's own promises: `make help` lists every target it documents, and no documented target is empty."""

import re
import shutil
import subprocess

import pytest

from autograder.course.settings import REPO_ROOT

MAKEFILE = REPO_ROOT / "Makefile"
# `name: prerequisites  ## what it does`, then the recipe's lines, each starting with a tab
DOCUMENTED = re.compile(r"^([A-Za-z][\w-]*):(?!=)([^#\n]*)##\s*(.+)\n((?:\t.*\n)*)", re.M)


def documented(text: str) -> dict[str, tuple[list[str], str, str]]:
    """``target -> (prerequisites, comment, recipe)`` for each target with a ``##`` comment."""
    return {m[1]: (m[2].split(), m[3].strip(), m[4]) for m in DOCUMENTED.finditer(text)}


def phony(text: str) -> set[str]:
    return {name for line in re.findall(r"^\.PHONY:(.*)$", text, re.M) for name in line.split()}


def empty_targets(text: str) -> list[str]:
    """Documented targets with no recipe whose prerequisites are all phony: they do nothing of their own."""
    phonies = phony(text)
    return [
        name
        for name, (prerequisites, _, recipe) in documented(text).items()
        if not recipe and all(p in phonies for p in prerequisites)
    ]


def test_no_documented_target_is_empty():
    text = MAKEFILE.read_text()
    assert len(documented(text)) > 10, "is the pattern still right?"
    assert not empty_targets(text), f"these targets promise something and run nothing: {empty_targets(text)}"
    stand_in = "lint: install  ## ruff on the Python code\n\nclean:  ## forget\n\trm -rf grading\n"
    assert empty_targets(".PHONY: install lint clean\n" + stand_in) == ["lint"]


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_help_lists_every_documented_target_with_its_comment():
    listed = subprocess.run(["make", "--no-print-directory", "help"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    lines = {line.split(maxsplit=1)[0]: line.split(maxsplit=1)[1] for line in listed.stdout.splitlines() if line}
    expected = {name: comment for name, (_, comment, _) in documented(MAKEFILE.read_text()).items()}
    assert lines == expected
    # `make` alone is `make help`: compared as dry runs, so that a wrong default goal installs nothing
    dry = [subprocess.run(["make", "-n", "--no-print-directory", *goal], cwd=REPO_ROOT, capture_output=True,
                          text=True).stdout for goal in ([], ["help"])]
    assert dry[0] == dry[1], f"`make` alone should list the targets, not run {dry[0]}"
