"""``collect``: an LMS download (zip or folder) into nbgrader's ``submitted/<student>/<assignment>/`` layout.

Two namings are recognised: a file named ``<student>_<anything>_<notebook>.ipynb`` (Canvas
style, a resubmission may end in ``-1``), and ``<student folder>/<...>/<notebook>.ipynb``
(Moodle style, one folder per student); ``--pattern`` takes any regular expression with a
``student`` group instead. Every file is accounted for: collected, unmatched or unreadable
(unreadable files are still collected, so that ``grade`` reports them too).
"""

import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import nbformat

from autograder.course.paths import GRADING_DIRECTORY, GradingFolder
from autograder.course.settings import assignment_ids

CANVAS = r"^(?P<student>[A-Za-z0-9.\-]+?)_(?:.*_)?{notebook}(?:-\d+)?\.ipynb$"
SAFE_ID = re.compile(r"[^A-Za-z0-9._\-]+")


@dataclass
class CollectReport:
    collected: list[tuple[str, str, str]] = field(default_factory=list)  # (student, assignment, original name)
    unmatched: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # an earlier file of the same student and notebook


def match(relative: PurePosixPath, notebooks: list[str], pattern: str | None) -> tuple[str, str] | None:
    """``(student, notebook)`` for a file of the download, or None if it names no known notebook."""
    for notebook in notebooks:
        if pattern:
            found = re.search(pattern, str(relative))
            if found and notebook in relative.name:
                return found.group("student"), notebook
            continue
        found = re.match(CANVAS.format(notebook=re.escape(notebook)), relative.name)
        if found:
            return found.group("student"), notebook
        if relative.name == f"{notebook}.ipynb" and len(relative.parts) > 1:
            return relative.parts[0].split("_")[0], notebook
    return None


def collect(
    source: Path, root: Path, pattern: str | None = None, grading_directory: str = GRADING_DIRECTORY
) -> CollectReport:
    report = CollectReport()
    notebooks = assignment_ids(root)  # one notebook per assignment, named like it
    with tempfile.TemporaryDirectory(prefix="collect-") as scratch:
        if zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as archive:
                archive.extractall(scratch)
            folder = Path(scratch)
        else:
            folder = Path(source)
        files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
        for path in sorted(files, key=lambda p: p.stat().st_mtime):  # later files replace earlier ones
            relative = PurePosixPath(path.relative_to(folder).as_posix())
            found = match(relative, notebooks, pattern)
            if found is None:
                report.unmatched.append(str(relative))
                continue
            student, notebook = SAFE_ID.sub("_", found[0]), found[1]
            try:
                nbformat.read(path, as_version=4)
            except Exception:  # noqa: BLE001 (any parse error: report it, grade will say unreadable)
                report.unreadable.append(str(relative))
            target = GradingFolder(root, grading_directory).submitted(student, notebook) / f"{notebook}.ipynb"
            earlier = [c for c in report.collected if c[:2] == (student, notebook)]
            if earlier:
                report.replaced += [c[2] for c in earlier]
                report.collected = [c for c in report.collected if c[:2] != (student, notebook)]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            report.collected.append((student, notebook, str(relative)))
    return report
