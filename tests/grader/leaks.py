"""What a feedback page must never show: the hidden-test lines of the course's source notebooks.

Found here independently of ``autograder.pipeline.commands.feedback``, so that a slip there cannot hide itself.
"""

import html
import json
import re
from pathlib import Path

import nbformat

from autograder.course.course import Course
from autograder.course.paths import SUBMITTED
from autograder.course.settings import RELEASE_DIRECTORY, SOURCE_DIRECTORY
from autograder.pipeline.commands.feedback import SHORTEST_SECRET
from tests.grader.hostile_class import hidden_test_blocks


def normalised(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


def secret_lines(course: Course) -> set[str]:
    """Every hidden-test line of the course's source notebooks, less those under SHORTEST_SECRET characters and
    those the release shows (as a line or within one), as printed and as quoted in a .ipynb file.

    Found here independently of autograder.pipeline.commands.feedback, so that a slip there cannot hide itself.
    """
    hidden = {line for path in (course.root / SOURCE_DIRECTORY).rglob("*.ipynb")
              for block in hidden_test_blocks(nbformat.read(path, 4)) for line in normalised(block)}
    public = "\n".join(line for path in (course.root / RELEASE_DIRECTORY).glob("*/*.ipynb")
                       for cell in nbformat.read(path, 4).cells for line in normalised(cell.source))
    secrets = {line for line in hidden if len(line) >= SHORTEST_SECRET and line not in public}
    return secrets | {json.dumps(line)[1:-1] for line in secrets}


def shown_lines(page: Path) -> list[str]:
    """The text of an HTML page as a reader sees it, line by line: tags dropped, entities decoded."""
    return [line for line in normalised(html.unescape(re.sub(r"<[^>]*>", "", page.read_text()))) if line]


def own_lines(page: Path) -> set[str]:
    """The lines of the notebook the page's student handed in (grading/submitted/<student>/<assignment>/)."""
    grading = page.parents[3]
    submitted = grading / SUBMITTED / page.parent.parent.name / page.parent.name / f"{page.stem}.ipynb"
    try:
        cells = nbformat.read(submitted, 4).cells
    except (OSError, ValueError):  # nothing handed in, or not a notebook (the page then shows no code of theirs)
        return set()
    return {line for cell in cells for line in normalised(cell.source)}


def not_written_by_them(secrets: set[str], own: set[str]) -> set[str]:
    """The secrets that none of the student's own lines holds."""
    return {secret for secret in secrets if not any(secret in line for line in own)}


def leaks(pages: list[Path], secrets: set[str]) -> list[tuple[str, str]]:
    """``(student, secret)`` for every secret line shown on one of ``pages`` (feedback/<student>/<assignment>/).

    A line the student wrote in the submission is theirs to see, even where a hidden test has the same line
    (notebook 03's answer line ``pe = sinusoidal_encoding(max_len, d_model).unsqueeze(0)`` holds a test line).
    """
    found = []
    for page in pages:
        hidden = not_written_by_them(secrets, own_lines(page))
        found += [(page.parent.parent.name, secret) for line in shown_lines(page)
                  for secret in hidden if secret in line]
    return found
