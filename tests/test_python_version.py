"""One lowest Python version: what pyproject.toml requires is what every page claims and what ruff targets.

The code needs 3.11 (``enum.StrEnum``, ``datetime.UTC``); a page that says "Python 3.10+" sends a
reader with 3.10 into an install that fails at the first import.
"""

import os
import re
import tomllib
from pathlib import Path

import yaml

from autograder.course.settings import REPO_ROOT

# "Python 3.11+", "Python 3.11 or later", "Python >= 3.11": a claim of a lowest version (not "Python 3.11.2").
CLAIM = re.compile(r"\bPython\s*(?:(?:>=|≥)\s*(3\.\d+)|(3\.\d+)(?:\+|\s+or\s+(?:later|newer|above)))", re.I)
NOT_PAGES = {".git", ".venv", "node_modules", "build", "grading"}  # what the repository holds but did not write
# Versions pages name for something else than the course, dropped before the claims are read.
OTHER_PYTHONS = ("a conda Python 3.12+",)  # classroom/k8s/README.md: what docker-stacks images bring


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def pyproject() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def required() -> tuple[int, ...]:
    requires = pyproject()["project"]["requires-python"]
    match = re.fullmatch(r">=\s*(3\.\d+)", requires)
    assert match, f"requires-python should name one lowest version (>=3.N): {requires}"
    return version(match.group(1))


def pages() -> list[Path]:
    """Every Markdown page of the repository, the README and docs/ among them."""
    found = []
    for folder, subfolders, files in os.walk(REPO_ROOT):
        subfolders[:] = [name for name in subfolders if name not in NOT_PAGES and not name.startswith(".")]
        found += [Path(folder, name) for name in files if name.endswith(".md")]
    return found


def claims(text: str) -> list[tuple[int, ...]]:
    for other in OTHER_PYTHONS:
        text = text.replace(other, "")
    return [version(at_least or plus) for at_least, plus in CLAIM.findall(text)]


def test_the_claim_pattern_reads_what_pages_write():
    assert claims("On a machine with Python 3.10+ and `make`") == [(3, 10)]
    assert claims("needs python 3.12 or later; Python >= 3.11, Python ≥3.13") == [(3, 12), (3, 11), (3, 13)]
    assert claims("Debian's Python 3.11.2 and a Python 3.11's venv module") == []


def test_every_page_claims_the_version_pyproject_requires():
    lowest = required()
    found = {path.relative_to(REPO_ROOT).as_posix(): claims(path.read_text()) for path in pages()}
    assert found["README.md"], "the README should say which Python the course needs"
    wrong = {page: listed for page, listed in found.items() if any(claim != lowest for claim in listed)}
    assert not wrong, f"pyproject.toml requires Python {lowest}; these pages claim otherwise: {wrong}"


def test_ruff_and_conda_target_the_required_version():
    lowest = required()
    target = pyproject()["tool"]["ruff"]["target-version"]
    assert target == "py" + "".join(map(str, lowest)), f"ruff targets {target}, pyproject requires {lowest}"
    environment = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    python = next(d for d in environment["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert version(python.removeprefix("python=")) >= lowest, f"environment.yml's {python} is older than {lowest}"
