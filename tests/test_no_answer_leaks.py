"""No answer leaks: students get notebooks/ and the helper package, and neither holds any exercise's solution.

The finder is :mod:`autograder.course.answer_leaks`, the one the student kit's builder refuses a kit with.
"""

import json
from pathlib import Path

import pytest

from autograder.course import settings
from autograder.course.answer_leaks import WINDOW, course_solutions, leaks, normalized_lines


def file_text(path: Path) -> str:
    if path.suffix == ".ipynb":
        return "\n".join("".join(cell["source"]) for cell in json.loads(path.read_text())["cells"])
    return path.read_text(errors="replace")


def student_files() -> list[Path]:
    """What students get: the release folder and the helper package."""
    release = (settings.REPO_ROOT / settings.RELEASE_DIRECTORY).rglob("*")
    helpers = (settings.REPO_ROOT / "tfcourse").rglob("*.py")
    return sorted(p for p in [*release, *helpers] if p.is_file() and ".ipynb_checkpoints" not in p.parts)


def test_no_release_file_or_helper_module_holds_any_solution():
    files = [(str(p.relative_to(settings.REPO_ROOT)), file_text(p)) for p in student_files()]
    assert any(name.startswith("tfcourse") for name, _ in files) and any(name.endswith(".ipynb") for name, _ in files)
    assert not leaks(files, course_solutions())


@pytest.mark.parametrize("indent", ["", "        "])
def test_the_leak_finder_catches_a_copied_answer(indent):
    solutions = course_solutions()
    name, code = next((n, c) for n, c in solutions.items() if len(normalized_lines(c)) > WINDOW)
    lines = code.splitlines()
    copied = "\n".join(indent + line.strip() + "  # pasted" for line in lines[1 : 1 + WINDOW])
    found = leaks([("helper.py", f"import torch\n{copied}\n")], {name: code})
    assert found == [f"helper.py holds the solution of {name}"]
    one_line = indent + next(line for line in lines if line.strip())
    assert leaks([("helper.py", one_line)], {name: code}) == []
