"""nbgrader's collect from the ngshare service, trusting nothing that a student uploaded there.

ngshare checks only that each path of a submission stays inside it; ngshare_exchange 0.5.3's collect then writes
each file where its path says, so one submission holding a folder where nbgrader reads a file (``timestamp.txt/x``)
stopped collect for every student after it, at every try (it is downloaded again each time), and ``--student`` was
ignored. :class:`SafeNgshareCollect` replaces it through ``ExchangeFactory.collect``
(:func:`autograder.course.settings.configure`): the filesystem exchange's collect
(:class:`~autograder.pipeline.exchange.exchange_collect.SafeExchangeCollect`, whose steps it inherits) reading
ngshare's API, each submission checked whole before a byte of it is written (:func:`checked_files`). Its rules:
docs/running-a-class.md (ngshare).
"""

import base64
import binascii
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from nbgrader.utils import parse_utc
from ngshare_exchange.collect import ExchangeCollect as NgshareCollect

from autograder.course.paths import SUBMISSION_MARKS, TIMESTAMP_FILE
from autograder.pipeline.exchange.exchange_collect import (
    DISK_FULL,
    TIME_FORMAT,
    Accepted,
    Candidate,
    SafeExchangeCollect,
)
from autograder.pipeline.exchange.handins import MAX_DEPTH, HandinCopy, HandinLimits, RefusedHandin, safe_name
from autograder.pipeline.storage.refusals import Refusal


@dataclass
class Upload(Candidate):
    """One submission ngshare lists: ``name`` is ``student+assignment+time``, as the filesystem exchange names one;
    ``changed`` is ngshare's time (the server's), in seconds."""

    stamp: str = ""  # ngshare's time, as its API names the submission
    time: datetime = datetime.min  # the same, parsed (naive UTC, as nbgrader's times are)


def shown(path: PurePosixPath) -> str:
    return safe_name(str(path))


def file_path(entry: object) -> PurePosixPath:
    """The path of one file of a submission: relative, inside it, printable; else the whole hand-in is refused."""
    path = entry.get("path") if isinstance(entry, dict) else None
    if not isinstance(path, str) or not path:
        raise RefusedHandin("an entry without a path: ngshare sent something that is not a file")
    parsed = PurePosixPath(path)
    if parsed.is_absolute() or any(part in ("", ".", "..") for part in path.split("/")):
        raise RefusedHandin(f"{safe_name(path)}: a path that leaves the hand-in")
    if not path.isprintable():
        raise RefusedHandin(f"{safe_name(path)}: a name with control characters")
    if len(parsed.parts) - 1 > MAX_DEPTH:
        raise RefusedHandin(f"{safe_name(path)}: folders nested more than {MAX_DEPTH} deep")
    return parsed


def file_content(entry: dict, path: PurePosixPath) -> bytes:
    content = entry.get("content")
    try:
        if isinstance(content, str):
            return base64.b64decode(content)
    except (binascii.Error, ValueError):
        pass
    raise RefusedHandin(f"{shown(path)}: its content is not base64, as ngshare sends files")


def checked_files(files: object, limits: HandinLimits) -> dict[PurePosixPath, bytes]:
    """ngshare's file list of one submission (``[{"path": ..., "content": base64}, ...]``), checked whole.

    Refused (:class:`RefusedHandin`, naming the entry and the rule) if any path leaves the hand-in
    or is given twice, a path is both a file and a folder, a folder stands where nbgrader reads a
    file (the submission's marks and the notebooks at the top), or the hand-in has more files and
    folders, or more bytes, than ``limits`` allow (counted as :func:`~autograder.pipeline.exchange.handins.copy_handin`
    counts them: every file and folder below the top; each file's bytes).
    """
    if not isinstance(files, list):
        raise RefusedHandin("ngshare sent no list of files")
    contents: dict[PurePosixPath, bytes] = {}
    size = 0
    for entry in files:
        path = file_path(entry)
        if path in contents:
            raise RefusedHandin(f"{shown(path)}: the same path twice")
        contents[path] = file_content(entry, path)
        size += len(contents[path])
        if size > limits.max_bytes:
            raise RefusedHandin(f"more than {limits.max_bytes:,} bytes (the limit the instructor set)")
    folders = {parent for path in contents for parent in path.parents if parent != PurePosixPath(".")}
    for folder in sorted(folders):
        if folder in contents:
            raise RefusedHandin(f"{shown(folder)} is both a file and a folder")
        if len(folder.parts) == 1 and (folder.name in SUBMISSION_MARKS or folder.suffix == ".ipynb"):
            raise RefusedHandin(f"{shown(folder)} is a folder where nbgrader reads a file")
    if len(contents) + len(folders) > limits.max_files:
        raise RefusedHandin(f"more than {limits.max_files} files and folders (the limit the instructor set)")
    return contents


def unpack_submission(files: object, target: Path, limits: HandinLimits) -> None:
    """Write a checked submission into ``target`` (a new folder), or refuse it before writing anything."""
    contents = checked_files(files, limits)
    target.mkdir()
    for path, content in contents.items():
        destination = target.joinpath(*path.parts)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(content)


class SafeNgshareCollect(SafeExchangeCollect, NgshareCollect):
    """The filesystem exchange's collect with ngshare's API as its source (ngshare's client methods come from
    ngshare_exchange's collect, the steps from :class:`SafeExchangeCollect`)."""

    def start(self) -> None:
        NgshareCollect.start(self)  # no exchange folder on this machine to check, as the filesystem collect does

    def init_src(self) -> None:
        course, assignment = self.coursedir.course_id, self.coursedir.assignment_id
        if course == "":
            self.fail("No course id specified. Re-run with --course flag.")
        listed = self.ngshare_api_get(f"/submissions/{course}/{assignment}")
        if listed is None:
            self.fail("Failed to list submissions.")
        wanted = self.coursedir.student_id if self.coursedir.student_id not in ("", "*") else None
        self.candidates: dict[str, list[Candidate]] = {}
        self.refused: list[Refusal] = []
        self.taken: dict[str, str] = {}
        for entry in listed.get("submissions", []):
            student, stamp = str(entry.get("student_id", "")), str(entry.get("timestamp", ""))
            if wanted in (None, student):
                upload = self.listed(student, stamp)
                if upload is not None:
                    self.candidates.setdefault(student, []).append(upload)
        self.duedate = self.assignment_duedate()

    def listed(self, student: str, stamp: str) -> Upload | None:
        """A submission as ngshare lists it, or None (refused) if its student id or its time cannot be used."""
        upload = Upload(f"{student}+{self.coursedir.assignment_id}+{stamp}", student, stamp=stamp)
        if student in ("", ".", "..") or "/" in student or not student.isprintable():
            self.refuse(upload, "its student id is not a folder name")
            return None
        try:
            upload.time = parse_utc(stamp)
        except ValueError:
            self.refuse(upload, "ngshare listed it without a time")
            return None
        upload.changed = upload.time.replace(tzinfo=UTC).timestamp()
        return upload

    def set_times(self, candidates: list[Candidate]) -> None:
        """ngshare's times came with the list (:meth:`listed`): nothing to read."""

    def measured(self, candidate: Upload) -> HandinCopy | None:
        """What ngshare's list says (its time); None for a submission not newer than the one collected, which is
        not downloaded again (with ``before_duedate``, only the one collected is left out)."""
        dest = self.submitted(candidate.student)
        collected = self.coursedir.get_existing_timestamp(str(dest)) if dest.is_dir() else None
        if candidate.time == collected:
            self.log.info(f"No newer submission to collect: {candidate.student} {self.coursedir.assignment_id}")
            return None
        if collected is not None and candidate.time < collected and not self.before_duedate:
            return None
        return HandinCopy(changed=candidate.changed)

    def verified(self, candidate: Upload, staging: Path) -> Accepted | None:
        """The submission, downloaded and checked, in ``staging``; None if refused (and recorded).

        Raises OSError (ENOSPC, EDQUOT) when the disk is full: the submission is not the student's fault.
        """
        course, assignment = self.coursedir.course_id, self.coursedir.assignment_id
        sent = self.ngshare_api_get(f"/submission/{course}/{assignment}/{candidate.student}",
                                    params={"timestamp": candidate.stamp})
        if sent is None:
            self.refuse(candidate, "ngshare did not send it (its error is logged above)")
            return None
        target = Path(tempfile.mkdtemp(dir=staging)) / "handin"
        try:
            unpack_submission(sent.get("files"), target, self.limits)
            (target / TIMESTAMP_FILE).write_text(candidate.time.strftime(TIME_FORMAT))
        except RefusedHandin as refusal:
            shutil.rmtree(target.parent, ignore_errors=True)
            self.refuse(candidate, str(refusal))
            return None
        except OSError as error:
            shutil.rmtree(target.parent, ignore_errors=True)
            if error.errno in DISK_FULL:
                raise
            self.refuse(candidate, f"it could not be written ({error.strerror})")
            return None
        return Accepted(target, candidate.time.replace(tzinfo=UTC), candidate.name)
