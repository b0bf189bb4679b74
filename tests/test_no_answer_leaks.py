"""No answer leaks: students get notebooks/ and the helper package, and neither holds any exercise's solution.

A solution leaks when a file students get contains a run of consecutive lines of it (three,
or all of them when the solution is shorter), whatever the indentation, spacing or comments.
Single common lines such as ``super().__init__()`` do not count on their own.
"""

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from autograder.course import settings
from tests.support.notebooks import answer_cells, read, solution_code

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


def file_text(path: Path) -> str:
    if path.suffix == ".ipynb":
        return "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text())["cells"])
    return path.read_text(errors="replace")


def student_files() -> list[Path]:
    """What students get: the release folder and the helper package."""
    release = (settings.REPO_ROOT / settings.RELEASE_DIRECTORY).rglob("*")
    helpers = (settings.REPO_ROOT / "tfcourse").rglob("*.py")
    return sorted(p for p in [*release, *helpers] if p.is_file() and ".ipynb_checkpoints" not in p.parts)


def leaks(files: Iterable[tuple[str, str]], solutions: dict[str, str]) -> list[str]:
    """``(file name, text)`` pairs that contain a fingerprint of one of ``solutions`` (name -> code)."""
    found = []
    for name, text in files:
        lines = normalized_lines(text)
        for answer, code in solutions.items():
            prints = fingerprints(code)
            size = len(next(iter(prints))) if prints else 0
            windows = {tuple(lines[i : i + size]) for i in range(len(lines) - size + 1)} if size else set()
            if prints & windows:
                found.append(f"{name} holds the solution of {answer}")
    return found


def all_solutions() -> dict[str, str]:
    return {
        f"{assignment}/{name}": solution_code(cell.source)
        for assignment in settings.assignment_ids()
        for name, cell in answer_cells(read(settings.source_notebook(assignment))).items()
    }


def test_no_release_file_or_helper_module_holds_any_solution():
    files = [(str(p.relative_to(settings.REPO_ROOT)), file_text(p)) for p in student_files()]
    assert any(name.startswith("tfcourse") for name, _ in files) and any(name.endswith(".ipynb") for name, _ in files)
    assert not leaks(files, all_solutions())


@pytest.mark.parametrize("indent", ["", "        "])
def test_the_leak_finder_catches_a_copied_answer(indent):
    solutions = all_solutions()
    name, code = next((n, c) for n, c in solutions.items() if len(normalized_lines(c)) > WINDOW)
    lines = code.splitlines()
    copied = "\n".join(indent + line.strip() + "  # pasted" for line in lines[1 : 1 + WINDOW])
    found = leaks([("helper.py", f"import torch\n{copied}\n")], {name: code})
    assert found == [f"helper.py holds the solution of {name}"]
    one_line = indent + next(line for line in lines if line.strip())
    assert leaks([("helper.py", one_line)], {name: code}) == []
