"""``collect``: an LMS download (zip or folder) into nbgrader's ``submitted/<student>/<assignment>/`` layout.

Namings recognised, first match wins: Moodle's (*Download all submissions*, a folder or a prefix per student; with
blind marking the student becomes ``Participant_<id>``), Canvas's (*Download Submissions*; an anonymous download has
``anon_<id>`` instead of name and user id: lib/content_zipper.rb, ``get_filename`` and ``add_upload_submission``, in
instructure/canvas-lms), any ``<student>_<anything>_<notebook>.ipynb`` or ``<student folder>/<...>/<notebook>``, or
``--pattern``. What is taken, listed and refused, and what ``grading/lms_students.json`` keeps for ``export``:
docs/instructors.md (collect).
"""

import json
import re
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

import nbformat

from autograder.course.course import Course
from autograder.pipeline.exchange.handin_names import CopyRank, copy_pattern
from autograder.pipeline.exchange.handins import DEFAULT_LIMITS, HandinLimits, RefusedHandin, check_file, safe_name
from autograder.pipeline.storage.refusals import Refusal, record_refusals

CANVAS, MOODLE = "canvas", "moodle"  # the LMSs whose downloads collect reads (their formats: autograder/lms/)
LMS_STUDENTS = "lms_students.json"  # in the grading folder: {student: {"lms", "name", "ids": {assignment: id}}}
MOODLE_PREFIX = re.compile(r"^(?P<name>[^_/]+)_(?P<id>\d+)_assignsubmission_[a-z]+_")
MOODLE_BLIND_NAME = "Participant"  # Moodle's name for every student under blind marking
CANVAS_FILE = (
    r"^(?:(?P<name>\w+?)_)??(?:LATE_)?(?:(?P<id>\d+)|(?P<anonymous>anon_[A-Za-z0-9]+))_(?:\d+_)?(?:.*_)?{notebook}$"
)
NAMED_FILE = r"^(?P<student>[A-Za-z0-9.\-]+?)_(?:.*_)?{notebook}$"
SAFE_ID = re.compile(r"[^A-Za-z0-9._\-]+")


@dataclass(frozen=True)
class Found:
    """A file of the download that names a known notebook, and who handed it in."""

    student: str
    notebook: str
    rank: CopyRank = CopyRank(own_name=True)  # the notebook's own name, or which copy's
    lms: str = ""  # CANVAS, MOODLE, or "" when the naming says nothing of the LMS
    lms_id: str = ""  # Canvas user id or Moodle participant id ("" for an anonymous Canvas download)
    name: str = ""  # the student's name as the download spells it


@dataclass
class CollectReport:
    collected: list[tuple[str, str, str]] = field(default_factory=list)  # (student, assignment, original name)
    unmatched: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    replaced: list[tuple[str, str, str]] = field(default_factory=list)  # a file of the same student and notebook
    refused: list[Refusal] = field(default_factory=list)  # matched a student and notebook, but not collected
    lms_ids: dict[tuple[str, str], str] = field(default_factory=dict)  # (student, assignment) -> "canvas 1234"
    ranks: dict[str, CopyRank] = field(default_factory=dict)  # original name -> the rank of its notebook's name

    def copies_taken(self) -> list[tuple[str, str, str]]:
        """The collected files whose names are a copy's (``01_attention (1).ipynb``), not the notebook's own."""
        return [entry for entry in self.collected if not self.ranks[entry[2]].own_name]


def match_moodle(relative: PurePosixPath, notebook: str) -> Found | None:
    prefix = MOODLE_PREFIX.match(relative.parts[0])
    if not prefix:
        return None
    file_name = relative.name if len(relative.parts) > 1 else relative.parts[0][prefix.end() :]
    named = re.fullmatch(copy_pattern(notebook), file_name)
    if not named:
        return None
    name, lms_id = prefix.group("name"), prefix.group("id")
    student = f"{name}_{lms_id}" if name == MOODLE_BLIND_NAME else name
    return Found(student, notebook, CopyRank.of(named), MOODLE, lms_id, name)


def match_canvas(relative: PurePosixPath, notebook: str) -> Found | None:
    found = re.match(CANVAS_FILE.format(notebook=copy_pattern(notebook)), relative.name)
    if not found:
        return None
    if found.group("anonymous"):
        return Found(found.group("anonymous"), notebook, CopyRank.of(found), CANVAS)
    name = found.group("name") or found.group("id")
    return Found(name, notebook, CopyRank.of(found), CANVAS, found.group("id"), name)


def match(relative: PurePosixPath, notebooks: list[str], pattern: str | None) -> Found | None:
    """Who handed in this file of the download and for which notebook, or None if it names no known notebook."""
    for notebook in notebooks:
        if pattern:
            found = re.search(pattern, str(relative))
            named = re.search(rf"(?<![A-Za-z0-9]){copy_pattern(notebook)}$", relative.name)
            if found and named:
                return Found(found.group("student"), notebook, CopyRank.of(named))
            continue
        lms = match_moodle(relative, notebook) or match_canvas(relative, notebook)
        if lms:
            return lms
        named = re.match(NAMED_FILE.format(notebook=copy_pattern(notebook)), relative.name)
        if named:
            return Found(named.group("student"), notebook, CopyRank.of(named))
        alone = re.fullmatch(copy_pattern(notebook), relative.name)
        if alone and len(relative.parts) > 1:
            return Found(relative.parts[0].split("_")[0], notebook, CopyRank.of(alone))
    return None


def lms_students_path(course: Course) -> Path:
    return course.grading.file(LMS_STUDENTS)


def load_lms_students(course: Course) -> dict[str, dict]:
    """``{student: {"lms": "canvas"|"moodle", "name": ..., "ids": {assignment: id}}}`` from earlier collects."""
    path = lms_students_path(course)
    return json.loads(path.read_text()) if path.exists() else {}


def is_someone_else(entry: dict | None, found: Found) -> bool:
    """Whether a student already known under this name has another LMS identity (two people, one name)."""
    if not entry or not found.lms_id or entry["lms"] != found.lms:
        return False
    if found.lms == CANVAS:  # one user id across the course
        return any(known != found.lms_id for known in entry["ids"].values())
    return entry["ids"].get(found.notebook, found.lms_id) != found.lms_id  # a participant id per assignment


def remember(students: dict[str, dict], student: str, found: Found) -> None:
    entry = students.setdefault(student, {"lms": found.lms, "name": found.name, "ids": {}})
    entry.update(lms=found.lms, name=found.name)
    entry["ids"][found.notebook] = found.lms_id


def unpack(archive: zipfile.ZipFile, folder: Path, limits: HandinLimits) -> dict[str, str]:
    """Extract the archive's plain files within the size limit; ``{name: why it was left out}`` for the rest."""
    left_out = {}
    for info in archive.infolist():
        kind = stat.S_IFMT(info.external_attr >> 16)
        if info.is_dir():
            continue
        if kind not in (0, stat.S_IFREG):  # 0: an archive made where files carry no Unix mode
            left_out[info.filename] = "the archive holds it as a link or special file: only plain files are collected"
        elif info.file_size > limits.max_bytes:
            left_out[info.filename] = f"more than {limits.max_bytes:,} bytes (the limit)"
        else:
            archive.extract(info, folder)
    return left_out


def entries(folder: Path) -> list[Path]:
    """Everything in the download but folders and hidden names, links included (never followed)."""
    found = (p for p in folder.rglob("*") if not p.name.startswith("."))
    return sorted(p for p in found if p.is_symlink() or not p.is_dir())


def collect(
    source: Path, course: Course, pattern: str | None = None, limits: HandinLimits = DEFAULT_LIMITS
) -> CollectReport:
    report = CollectReport()
    notebooks = course.assignments()  # one notebook per assignment, named like it
    lms_students = load_lms_students(course)
    seen = datetime.now(UTC).isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix="collect-") as scratch:
        left_out: dict[str, str] = {}
        if zipfile.is_zipfile(source):
            with zipfile.ZipFile(source) as archive:
                left_out = unpack(archive, Path(scratch), limits)
            folder = Path(scratch)
        else:
            folder = Path(source)
        files = [(PurePosixPath(p.relative_to(folder).as_posix()), p) for p in entries(folder)]
        files += [(PurePosixPath(name), None) for name in sorted(left_out)]
        matched = []
        for relative, path in files:
            found = match(relative, notebooks, pattern)
            if found is None:
                report.unmatched.append(str(relative))
            else:
                matched.append((found, relative, path))
        # Of one student's files for a notebook, the one that ranks first comes last and replaces the others:
        # the notebook's own name, else the latest copy, else the newest (the LMS's times; never a link's target's).
        for found, relative, path in sorted(matched, key=lambda m: (m[0].rank, m[2].lstat().st_mtime if m[2] else 0)):
            student, notebook = SAFE_ID.sub("_", found.student), found.notebook
            try:
                if path is None:
                    raise RefusedHandin(left_out[str(relative)])
                check_file(path, limits)
            except RefusedHandin as refusal:
                report.refused.append(Refusal(student, notebook, str(refusal), safe_name(str(relative)), seen))
                continue
            if is_someone_else(lms_students.get(student), found):
                student = f"{student}_{found.lms_id}"
            if found.lms:
                remember(lms_students, student, found)
                report.lms_ids[student, notebook] = f"{found.lms} {found.lms_id or '(anonymous)'}"
            try:
                nbformat.read(path, as_version=4)
            except Exception:  # any parse error: report it, grade will say unreadable
                report.unreadable.append(str(relative))
            target = course.grading.submitted(student, notebook) / f"{notebook}.ipynb"
            report.replaced += [c for c in report.collected if c[:2] == (student, notebook)]
            report.collected = [c for c in report.collected if c[:2] != (student, notebook)]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            report.collected.append((student, notebook, str(relative)))
            report.ranks[str(relative)] = found.rank
    record_refusals(course.grading.path, report.refused)
    if lms_students:
        path = lms_students_path(course)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(lms_students, indent=1, sort_keys=True))
    return report
