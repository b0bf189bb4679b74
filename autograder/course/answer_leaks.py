"""Whether a file holds an exercise's solution: the one finder of the test suite's scan and of the kit's builder.

A solution leaks when a file contains a run of consecutive lines of it (three, or all of them when
the solution is shorter: a one-line answer is found on its own), whatever the indentation, spacing
or comments. Single common lines of a longer solution such as ``super().__init__()`` do not count
on their own. ``tests/test_no_answer_leaks.py`` scans what students get with it, and the student
kit's builder (:mod:`classroom.kit_secrets`) refuses a kit where it finds anything.
"""

import re
from collections.abc import Iterable
from pathlib import Path

import nbformat

from autograder.course.notebooks import grade_id, is_answer_cell, solution_code
from autograder.course.settings import REPO_ROOT, assignment_ids, source_notebook

WINDOW = 3


def normalized_lines(text: str) -> list[str]:
    """Lines without comments and with whitespace collapsed; blank lines dropped."""
    lines = (re.sub(r"\s+", " ", line.split("#", 1)[0]).strip() for line in text.splitlines())
    return [line for line in lines if line]


def fingerprints(code: str) -> set[tuple[str, ...]]:
    """Every run of WINDOW consecutive lines of ``code`` (the whole of it when shorter)."""
    lines = normalized_lines(code)
    size = min(WINDOW, len(lines))
    return {tuple(lines[i : i + size]) for i in range(len(lines) - size + 1)} if lines else set()


def course_solutions(root: Path = REPO_ROOT) -> dict[str, str]:
    """Every code answer of the course under ``root`` (``<assignment>/<grade id>`` -> the code between its
    solution markers)."""
    return {
        f"{assignment}/{grade_id(cell)}": solution_code(cell.source)
        for assignment in assignment_ids(root)
        for cell in nbformat.read(source_notebook(assignment, root), as_version=4).cells
        if is_answer_cell(cell)
    }


def leaks(files: Iterable[tuple[str, str]], solutions: dict[str, str]) -> list[str]:
    """``"<file> holds the solution of <answer>"`` for each of ``files`` (name, text) holding a fingerprint of one
    of ``solutions`` (name -> code)."""
    prints = {answer: fingerprints(code) for answer, code in solutions.items()}
    found = []
    for name, text in files:
        lines = normalized_lines(text)
        windows = {size: {tuple(lines[i : i + size]) for i in range(len(lines) - size + 1)}
                   for size in range(1, WINDOW + 1)}
        found += [f"{name} holds the solution of {answer}" for answer, runs in prints.items()
                  if runs and runs & windows[len(next(iter(runs)))]]
    return found
