"""nbgrader's collect from the exchange, trusting nothing that a student's account can write there.

nbgrader 0.9.6's own collect picks each student's latest hand-in by the time written in the
folder's name (which the student chooses: ``--Exchange.timestamp_format``), only warns when the
folder belongs to another account ("cheating attempt?"), follows links while copying (a link to
the instructor's solution is collected as the solution), and stops for everyone on a name it
cannot parse. This class replaces it through nbgrader's ``ExchangeFactory.collect`` (set by
:func:`autograder.course.settings.configure`), so formgrader's *Collect* button and ``nbgrader
collect`` both use it. Each hand-in is copied by :func:`autograder.pipeline.exchange.handins.copy_handin`
at the server's time; the newest ``max_handins`` are measured without reading a file and tried newest first, and
the first that passes is the one staged (one staged copy at a time); a refused one never replaces an earlier good
one. The threat each rule answers: docs/running-a-class.md (Threat model).
"""

import errno
import os
import pwd
import shutil
import stat
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import check_mode
from traitlets import Bool, Int, Unicode

from autograder.course.paths import TIMESTAMP_FILE
from autograder.pipeline.exchange.handins import (
    MAX_BYTES,
    MAX_FILES,
    HandinCopy,
    HandinLimits,
    RefusedHandin,
    copy_handin,
    measure_handin,
    safe_name,
)
from autograder.pipeline.exchange.submission_marks import check_handin_marks
from autograder.pipeline.storage.refusals import Refusal, record_refusals

MAX_HANDINS = 20  # a student's hand-ins of one assignment that one collect looks at (the newest)
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)

# The time collect writes into timestamp.txt: nbgrader's parse_utc reads it.
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"


@dataclass
class Candidate:
    """A folder of the inbound that names a student and this assignment."""

    name: str
    student: str
    changed: float = 0.0  # the folder's own change time (lstat), until it is measured: then the hand-in's
    uid: int | None = None  # the folder's owner (lstat), where collect checks owners


@dataclass
class Accepted:
    staged: Path  # the verified copy, in the grading folder
    changed: datetime  # the server's time of the hand-in (UTC)
    name: str = ""  # its folder in the exchange


def account_name(uid: int) -> str:
    """The name of the system account ``uid``, or ``uid N`` where it has none."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def shown(name: str) -> str:
    """A hand-in's folder name without its random part (``student+assignment+time+…``)."""
    parts = name.split("+")
    return safe_name("+".join(parts[:3]) + ("+…" if len(parts) > 3 else ""))


class SafeExchangeCollect(ExchangeCollect):
    owner_must_match = Bool(
        False,
        help="Refuse a hand-in whose folder or any file in it is not owned by the system account of the "
        "student its name gives (a hub where each student is a system user). Off for one user's laptop.",
    ).tag(config=True)
    account_name = Unicode(
        "{student}",
        help="The system account of a student, from their id ({student}): where owner_must_match is on, their "
        "hand-in's files must be that account's. The hub's name is the account's on the course's own hub; The "
        "Littlest JupyterHub's accounts are 'jupyter-{student}'.",
    ).tag(config=True)
    max_bytes = Int(MAX_BYTES, help="Refuse a hand-in of more bytes than this.").tag(config=True)
    max_files = Int(MAX_FILES, help="Refuse a hand-in of more files than this.").tag(config=True)
    max_handins = Int(
        MAX_HANDINS,
        help="Look at only this many of a student's hand-ins of the assignment, the newest by the server's "
        "change time; the older ones are refused in one line (a flood of hand-ins costs collect no more).",
    ).tag(config=True)

    @property
    def limits(self) -> HandinLimits:
        return HandinLimits(self.max_bytes, self.max_files)

    @property
    def grading_folder(self) -> Path:
        return Path(self.coursedir.root) / Path(self.coursedir.submitted_directory).parent

    def init_src(self) -> None:
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.inbound_path = os.path.join(self.root, self.coursedir.course_id, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        wanted = self.coursedir.student_id if self.coursedir.student_id not in ("", "*") else None
        self.candidates: dict[str, list[Candidate]] = {}
        for name in sorted(os.listdir(self.inbound_path)):
            parts = name.split("+")
            if len(parts) < 3 or parts[1] != self.coursedir.assignment_id or wanted not in (None, parts[0]):
                continue
            self.candidates.setdefault(parts[0], []).append(Candidate(name, parts[0]))
        self.duedate = self.assignment_duedate()
        self.refused: list[Refusal] = []
        self.taken: dict[str, str] = {}  # student: the exchange folder this collect placed for grading

    def assignment_duedate(self) -> datetime | None:
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                return gradebook.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None

    def owner_of(self, student: str) -> int | None:
        if not self.owner_must_match:
            return None
        try:
            return pwd.getpwnam(self.account_name.format(student=student)).pw_uid
        except KeyError:
            raise RefusedHandin("it names a student who has no account on this machine") from None

    def refuse(self, candidate: Candidate, reason: str) -> None:
        self.log.warning(
            "Refused a hand-in of %s naming %s (%s): %s",
            self.coursedir.assignment_id, safe_name(candidate.student), shown(candidate.name), reason,
        )
        now = datetime.now(UTC).isoformat(timespec="seconds")
        changed = datetime.fromtimestamp(candidate.changed, UTC).isoformat() if candidate.changed else ""
        self.refused.append(
            Refusal(candidate.student, self.coursedir.assignment_id, reason, candidate.name, now, changed)
        )

    def set_times(self, candidates: list[Candidate]) -> None:
        """Each candidate's ``changed``: its folder's change time, which the server sets; and its owner."""
        for candidate in candidates:
            try:
                info = os.lstat(Path(self.inbound_path) / candidate.name)
                candidate.changed, candidate.uid = info.st_ctime, info.st_uid
            except OSError:
                candidate.changed = 0.0  # gone since it was listed: measuring it says so

    def own(self, candidates: list[Candidate]) -> list[Candidate]:
        """The candidates of one student that its account made (where collect checks owners).

        A folder another account made under the student's name is no hand-in of the student's: it
        neither takes a place among the student's newest ``max_handins`` nor stops their own. Those of
        each account are refused in one record, filed under that account (their trouble, not the
        named student's).
        """
        try:
            uid = self.owner_of(candidates[0].student) if candidates else None
        except RefusedHandin:
            return candidates  # no account of that name: each is refused when measured
        if uid is None:
            return candidates
        made_by: dict[int, list[Candidate]] = {}
        for candidate in candidates:
            if candidate.uid is not None and candidate.uid != uid:
                made_by.setdefault(candidate.uid, []).append(candidate)
        for maker, made in sorted(made_by.items()):
            self.refuse_impostor(made, account_name(maker))
        return [candidate for candidate in candidates if candidate.uid in (None, uid)]

    def refuse_impostor(self, made: list[Candidate], maker: str) -> None:
        named, assignment = safe_name(made[0].student), self.coursedir.assignment_id
        newest = max(candidate.changed for candidate in made)
        record = Candidate(f"{made[0].student}+{assignment}+(made by {maker})", maker, newest)
        self.refuse(record, f"{len(made)} hand-in folder(s) named for {named} were made by the account {maker}, "
                            f"not {named}'s: refused, and not counted among {named}'s hand-ins (root removes them: "
                            "make hub-clear-inbound)")

    def newest(self, candidates: list[Candidate]) -> list[Candidate]:
        """The newest ``max_handins`` of the student's own by their change time; the others refused in one record."""
        self.set_times(candidates)
        candidates = self.own(candidates)
        ordered = sorted(candidates, key=lambda candidate: candidate.changed, reverse=True)
        kept, older = ordered[: self.max_handins], ordered[self.max_handins :]
        if older:
            summary = Candidate(f"{older[0].student}+{self.coursedir.assignment_id}+(older hand-ins)",
                                older[0].student, older[0].changed)
            self.refuse(summary, f"{len(older)} older hand-ins not looked at: collect looks at the newest "
                                 f"{self.max_handins} only (SafeExchangeCollect.max_handins)")
        return kept

    def measured(self, candidate: Candidate) -> HandinCopy | None:
        """The hand-in measured without reading a file (its time set on ``candidate``), or None: refused."""
        source = Path(self.inbound_path) / candidate.name
        try:
            if stat.S_ISLNK(os.lstat(source).st_mode):
                raise RefusedHandin("the hand-in folder is a symbolic link")
            size = measure_handin(source, self.owner_of(candidate.student), self.limits)
        except RefusedHandin as refusal:
            self.refuse(candidate, str(refusal))
            return None
        except OSError as error:  # vanished or unreadable: refused, and collect goes on with the others
            self.refuse(candidate, f"it could not be read ({error.strerror})")
            return None
        candidate.changed = size.changed
        return size

    def verified(self, candidate: Candidate, staging: Path) -> Accepted | None:
        """A verified copy of the hand-in in ``staging``, or None (refused, and recorded).

        Raises OSError (ENOSPC, EDQUOT) when the disk is full: the hand-in is not the student's fault.
        """
        source = Path(self.inbound_path) / candidate.name
        slot = None
        try:
            if stat.S_ISLNK(os.lstat(source).st_mode):
                raise RefusedHandin("the hand-in folder is a symbolic link")
            slot = Path(tempfile.mkdtemp(dir=staging))
            target = slot / "handin"
            copied = copy_handin(source, target, self.owner_of(candidate.student), self.limits)
            check_handin_marks(target)  # its secret names its feedback page; no folder where a file belongs
            (target / TIMESTAMP_FILE).write_text(copied.changed_at.strftime(TIME_FORMAT))
        except (RefusedHandin, OSError) as error:
            if slot is not None:  # a refused copy leaves staging at once: one staged copy at a time
                shutil.rmtree(slot, ignore_errors=True)
            if isinstance(error, RefusedHandin):
                self.refuse(candidate, str(error))
                return None
            if error.errno in DISK_FULL:
                raise
            self.refuse(candidate, f"it could not be read ({error.strerror})")  # vanished or unreadable
            return None
        return Accepted(target, copied.changed_at, candidate.name)

    def disk_full(self, candidate: Candidate, error: OSError) -> None:
        self.log.error(
            "Could not collect a hand-in of %s by %s (%s): the disk of %s is full (%s). It stays in the exchange "
            "and the copy collected before is kept: free some space and collect again.",
            self.coursedir.assignment_id, safe_name(candidate.student), shown(candidate.name),
            self.grading_folder, error.strerror,
        )
        self.refuse(candidate, f"not collected: the grading folder's disk is full ({error.strerror}); it stays in "
                               "the exchange: free some space and collect again")

    def preferred(self, candidates: list[Candidate]) -> list[Candidate]:
        """The measured hand-ins in the order they may count: the latest first, or with ``before_duedate``
        the on-time ones first (the latest of them first)."""
        latest = sorted(candidates, key=lambda candidate: candidate.changed, reverse=True)
        if self.before_duedate and self.duedate is not None:
            due = self.duedate.replace(tzinfo=UTC).timestamp()
            return [c for c in latest if c.changed <= due] + [c for c in latest if c.changed > due]
        return latest

    def copy_files(self) -> None:
        if not self.candidates:
            self.log.warning(f"No submissions of '{self.coursedir.assignment_id}' for course "
                             f"'{self.coursedir.course_id}' to collect")
        self.grading_folder.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".collect-", dir=self.grading_folder))
        kept: dict[tuple[str, str], tuple[datetime, str]] = {}
        try:
            for student, candidates in sorted(self.candidates.items()):
                measured = [c for c in self.newest(candidates) if self.measured(c) is not None]
                for candidate in self.preferred(measured):  # one staged copy at a time: the first that passes
                    try:
                        handin = self.verified(candidate, staging)
                        if handin is not None:
                            self.take(student, handin)
                    except OSError as error:
                        if error.errno not in DISK_FULL:
                            raise
                        self.disk_full(candidate, error)
                        break
                    if handin is not None:
                        break
                self.note_kept(student, kept)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            try:
                record_refusals(self.grading_folder, self.refused, kept)
            except OSError as error:  # a full disk: the hand-ins stay in the exchange, the next collect lists them
                self.log.error("Could not write %s (%s): collect again to list the refusals",
                               self.grading_folder / "refused_handins.json", error.strerror)

    def submitted(self, student: str) -> Path:
        assignment = self.coursedir.assignment_id
        return Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment))

    def note_kept(self, student: str, kept: dict[tuple[str, str], tuple[datetime, str]]) -> None:
        """The time of the hand-in grading now reads for ``student``, if any: refusals of older ones are dropped."""
        dest = self.submitted(student)
        existing = self.coursedir.get_existing_timestamp(str(dest)) if dest.is_dir() else None
        if existing is not None:
            kept[self.coursedir.assignment_id, student] = (existing.replace(tzinfo=UTC), self.taken.get(student, ""))

    def take(self, student: str, handin: Accepted) -> None:
        """Put the hand-in where grading reads it, unless the one already there is the same or newer.

        The copy already there is set aside by a rename and removed only once the new one is in its place.
        """
        try:
            self.place(student, handin)
        finally:
            shutil.rmtree(handin.staged.parent, ignore_errors=True)  # staged copies never pile up

    def place(self, student: str, handin: Accepted) -> None:
        assignment = self.coursedir.assignment_id
        dest = self.submitted(student)
        new = handin.changed.replace(tzinfo=None)  # nbgrader's times are naive UTC
        if dest.is_dir():
            existing = self.coursedir.get_existing_timestamp(str(dest))
            newer = self.update and (existing is None or new > existing)
            if not (newer or (self.before_duedate and existing != new)):
                self.log.info(f"No newer submission to collect: {student} {assignment}")
                return
            self.log.info(f"Updating submission: {student} {assignment}")
            aside = dest.with_name(f".{dest.name}.replaced")
            dest.rename(aside)
            try:
                shutil.move(handin.staged, dest)  # a rename on one disk; a copy (that may fail) across disks
            except BaseException:
                shutil.rmtree(dest, ignore_errors=True)
                aside.rename(dest)
                raise
            shutil.rmtree(aside)
        else:
            self.log.info(f"Collecting submission: {student} {assignment}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(handin.staged, dest)
        self.taken[student] = handin.name
