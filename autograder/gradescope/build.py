"""``python -m autograder gradescope ASSIGNMENT``: Gradescope's autograder zip for one notebook.

The zip holds, at its root as Gradescope requires ("Autograder Specifications",
https://gradescope-autograders.readthedocs.io/en/latest/specs/), ``setup.sh`` and ``run_autograder``, beside the
part of the course that grading the notebook needs: the grader and the helper package, the data folder, the
notebook's source (hidden tests and reference answers) and release, the pinned requirements and the plan
(assignment and limits). It is for instructors only: it holds the hidden tests.
"""

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import nbformat

from autograder.course.course import Course
from autograder.course.notebooks import is_extra_credit, nbgrader_meta
from autograder.course.settings import DATA_DIRECTORY, RELEASE_DIRECTORY, SOURCE_DIRECTORY
from autograder.gradescope import (
    LOCK_FILE,
    PLAN_FILE,
    REQUIREMENTS,
    REQUIREMENTS_FILE,
    ROOT,
    ROOT_VARIABLE,
    TORCH_INDEX,
    TORCH_INDEX_VARIABLE,
)
from autograder.launch.limits import Limits

HERE = Path(__file__).resolve().parent
PACKAGES = ("autograder", "tfcourse")
SKIPPED = ("__pycache__", ".ipynb_checkpoints")
DOWNLOADED = Path(DATA_DIRECTORY, "ag_news")  # `make data`'s full download (git-ignored): the sample is enough
EXECUTABLE = 0o755


def zip_name(assignment: str) -> str:
    return f"{assignment}-gradescope-autograder.zip"


def requirement_name(line: str) -> str:
    return line.split("==")[0].strip().lower().replace("_", "-")


def grader_requirements(root: Path) -> str:
    """requirements.txt's pins of the packages the grader needs (:data:`autograder.gradescope.REQUIREMENTS`)."""
    lines = (root / "requirements.txt").read_text().splitlines()
    pins = [line for line in lines if "==" in line and requirement_name(line) in REQUIREMENTS]
    missing = set(REQUIREMENTS) - {requirement_name(line) for line in pins}
    if missing:
        raise ValueError(f"requirements.txt pins none of {sorted(missing)}")
    return "\n".join(pins) + "\n"


def script(name: str) -> str:
    """setup.sh or run_autograder, with the names and defaults it reads filled in."""
    text = (HERE / name).read_text()
    names = {"TORCH_INDEX_VARIABLE": TORCH_INDEX_VARIABLE, "TORCH_INDEX_DEFAULT": TORCH_INDEX,
             "REQUIREMENTS_FILE": REQUIREMENTS_FILE, "LOCK_FILE": LOCK_FILE,
             "ROOT_VARIABLE": ROOT_VARIABLE, "ROOT_DEFAULT": ROOT}
    for placeholder, value in names.items():
        text = text.replace(placeholder, value)
    return text


def course_files(course: Course, assignment: str) -> Iterator[tuple[Path, str]]:
    """``(file, name in the zip)`` for the course's part of the zip."""
    folders = [course.root / package for package in PACKAGES]
    folders += [course.root / DATA_DIRECTORY, course.source_folder(assignment), course.release_folder(assignment)]
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            name = path.relative_to(course.root)
            if path.is_file() and not set(SKIPPED) & set(name.parts) and DOWNLOADED not in name.parents:
                yield path, str(name)
    for name in ("nbgrader_config.py", LOCK_FILE):
        yield course.root / name, name


def autograded_points(course: Course, assignment: str) -> float:
    """The points of the notebook's graded code cells, extra credit aside: Gradescope's autograder points."""
    source = nbformat.read(course.source_notebook(assignment), as_version=4)
    tests = [nbgrader_meta(cell) for cell in source.cells if cell.cell_type == "code"]
    counted = [test for test in tests if test.get("grade") and not is_extra_credit(test.get("grade_id"))]
    return sum(test.get("points", 0) for test in counted)


def build(course: Course, assignment: str, output: Path, limits: Limits) -> Path:
    """Write ``output/<assignment>-gradescope-autograder.zip``; returns its path."""
    if assignment not in course.assignments():
        raise ValueError(f"{assignment!r} is not a notebook of this course ({', '.join(course.assignments())})")
    for part in (SOURCE_DIRECTORY, RELEASE_DIRECTORY):
        if not (course.root / part / assignment).is_dir():
            raise ValueError(f"{course.root / part / assignment} is missing")
    plan = {"assignment": assignment, "wall_seconds": limits.wall_seconds, "memory_bytes": limits.memory_bytes,
            "cell_timeout": limits.cell_timeout, "points": autograded_points(course, assignment)}
    output.mkdir(parents=True, exist_ok=True)
    path = output / zip_name(assignment)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("setup.sh", "run_autograder"):
            entry = zipfile.ZipInfo(name)
            entry.external_attr = (0o100000 | EXECUTABLE) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, script(name))
        archive.writestr(REQUIREMENTS_FILE, grader_requirements(course.root))
        archive.writestr(PLAN_FILE, json.dumps(plan, indent=1))
        for file, name in course_files(course, assignment):
            archive.write(file, name)
    return path
