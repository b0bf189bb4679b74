"""What is graded, fingerprinted per version: a change to it needs a new version (docs/maintainers.md).

What a class is graded on is, in each source notebook (``solutions/NN/NN.ipynb``), every graded cell's grade id
and points, the test cells' code (hidden tests included), the task cells' text, and each answer cell's code
outside its solution markers (the exercise as the student gets it). The reference answers and the prose are left
out: rewriting a model answer changes nothing a student is graded on.

``graded_versions.json`` beside this file holds one fingerprint per version. ``python -m
autograder.course.graded_versions`` records the current version's (``pyproject.toml``), and refuses where that
version is tagged ``vX.Y.Z`` (released) and what is graded has changed since: such a change needs a new version.
``tests/test_release.py`` checks that the current fingerprint is the one recorded for the current version, and
that each tagged version's is that of its tag's tree.
"""

import argparse
import hashlib
import json
import subprocess
import tomllib
from collections.abc import Mapping
from pathlib import Path

import nbformat

from autograder.course.notebooks import SOLUTION_REGION, grade_id, nbgrader_meta
from autograder.course.settings import REPO_ROOT, SOURCE_DIRECTORY

RECORD = Path(__file__).with_name("graded_versions.json")


def project_version(root: Path = REPO_ROOT) -> str:
    """The course's version, as ``pyproject.toml`` states it (the one every other file must name)."""
    return tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]


def is_source_notebook(path: str) -> bool:
    """``solutions/NN/NN.ipynb``: an assignment's source notebook (as :func:`settings.assignment_ids` finds them)."""
    parts = Path(path).parts
    return len(parts) == 3 and parts[0] == SOURCE_DIRECTORY and parts[2] == f"{parts[1]}.ipynb"


def graded_parts(text: str) -> list[list]:
    """What a notebook grades, cell by cell: ``[grade id, points, text]`` (points None where the cell has none)."""
    parts = []
    for cell in nbformat.reads(text, as_version=4).cells:
        meta = nbgrader_meta(cell)
        if not (meta.get("grade") or meta.get("solution")):
            continue
        points = meta.get("points") if meta.get("grade") else None
        if not meta.get("solution"):
            source = cell.source  # a test or task cell, as the grader runs or shows it
        elif cell.cell_type == "code":
            source = SOLUTION_REGION.sub("", cell.source)  # the stub the student gets, not the reference answer
        else:
            source = ""  # a written answer's cell holds the model answer; its question is in the prose
        parts.append([grade_id(cell), points, source])
    return parts


def fingerprint(notebooks: Mapping[str, str]) -> str:
    """sha256 of what the source notebooks (by path) grade, in path order."""
    graded = {path: graded_parts(text) for path, text in sorted(notebooks.items())}
    return hashlib.sha256(json.dumps(graded, sort_keys=True).encode()).hexdigest()


def notebooks_on_disk(root: Path = REPO_ROOT) -> dict[str, str]:
    paths = (path.relative_to(root).as_posix() for path in (root / SOURCE_DIRECTORY).glob("*/*.ipynb"))
    return {path: (root / path).read_text(encoding="utf-8") for path in paths if is_source_notebook(path)}


def git(*args: str, root: Path = REPO_ROOT) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def notebooks_at(revision: str, root: Path = REPO_ROOT) -> dict[str, str]:
    """The source notebooks as ``revision`` (a tag, a commit) holds them."""
    listed = git("ls-tree", "-r", "--name-only", revision, "--", SOURCE_DIRECTORY, root=root).splitlines()
    return {path: git("show", f"{revision}:{path}", root=root) for path in listed if is_source_notebook(path)}


def version_tags(root: Path = REPO_ROOT) -> set[str]:
    """The versions this clone has a ``vX.Y.Z`` tag of (none in a clone made without its tags)."""
    return {tag.removeprefix("v") for tag in git("tag", "--list", "v*.*.*", root=root).split()}


def recorded(path: Path = RECORD) -> dict[str, str]:
    return json.loads(path.read_text()) if path.exists() else {}


def record(version: str, value: str, released: bool, path: Path = RECORD) -> bool:
    """Record ``value`` as ``version``'s fingerprint; False (nothing written) where ``version`` is released and its
    recorded fingerprint differs: what is graded changed after a release, which needs a new version."""
    fingerprints = recorded(path)
    if released and fingerprints.get(version, value) != value:
        return False
    fingerprints[version] = value
    path.write_text(json.dumps(dict(sorted(fingerprints.items())), indent=1) + "\n")
    return True


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m autograder.course.graded_versions",
                                     description=__doc__.splitlines()[0])
    parser.parse_args()
    version = project_version()
    if not record(version, fingerprint(notebooks_on_disk()), released=version in version_tags()):
        raise SystemExit(f"version {version} is released (tag v{version}) and what is graded has changed since: write "
                         "a new version (docs/maintainers.md, Releasing a version), then run this again")
    print(f"recorded what {SOURCE_DIRECTORY}/ grades as version {version} in {RECORD.relative_to(REPO_ROOT)}")


if __name__ == "__main__":
    main()
