"""nbgrader's collect from the exchange, trusting nothing that a student's account can write there.

nbgrader 0.9.6's own collect picks each student's latest hand-in by the time written in the
folder's name (which the student chooses: ``--Exchange.timestamp_format``), only warns when the
folder belongs to another account ("cheating attempt?"), follows links while copying (a link to
the instructor's solution is collected as the solution), and stops for everyone on a name it
cannot parse. This class replaces it through nbgrader's ``ExchangeFactory.collect`` (set by
:func:`autograder.course.settings.configure`), so formgrader's *Collect* button and ``nbgrader
collect`` both use it:

- every hand-in is copied by :func:`autograder.pipeline.handins.copy_handin`: plain files and
  folders only, within the instructor's limits, and (``owner_must_match``, on the hub) every
  inode owned by the account of the student the folder names;
- its time is the server's (the latest change time in the hand-in), written to the collected
  ``timestamp.txt`` in place of the student's;
- the latest hand-in that passes counts: a refused one never replaces an earlier good one;
- each refusal is logged (without the folder's random part, which would let a reader of the log
  find the hand-in) and kept in ``grading/refused_handins.json``, which ``export`` lists.
"""

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
from traitlets import Bool, Int

from autograder.course.paths import TIMESTAMP_FILE
from autograder.pipeline.handins import MAX_BYTES, MAX_FILES, HandinLimits, RefusedHandin, copy_handin, safe_name
from autograder.pipeline.refusals import Refusal, record_refusals

# The time collect writes into timestamp.txt: nbgrader's parse_utc reads it.
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"


@dataclass
class Candidate:
    """A folder of the inbound that names a student and this assignment."""

    name: str
    student: str


@dataclass
class Accepted:
    staged: Path  # the verified copy, in the grading folder
    changed: datetime  # the server's time of the hand-in (UTC)


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
    max_bytes = Int(MAX_BYTES, help="Refuse a hand-in of more bytes than this.").tag(config=True)
    max_files = Int(MAX_FILES, help="Refuse a hand-in of more files than this.").tag(config=True)

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
            return pwd.getpwnam(student).pw_uid
        except KeyError:
            raise RefusedHandin("it names a student who has no account on this machine") from None

    def refuse(self, candidate: Candidate, reason: str) -> None:
        self.log.warning(
            "Refused a hand-in of %s naming %s (%s): %s",
            self.coursedir.assignment_id, safe_name(candidate.student), shown(candidate.name), reason,
        )  # fmt: skip
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self.refused.append(Refusal(candidate.student, self.coursedir.assignment_id, reason, candidate.name, now))

    def verified(self, candidate: Candidate, staging: Path) -> Accepted | None:
        """A verified copy of the hand-in in ``staging``, or None (refused, and recorded)."""
        source = Path(self.inbound_path) / candidate.name
        try:
            if stat.S_ISLNK(os.lstat(source).st_mode):
                raise RefusedHandin("the hand-in folder is a symbolic link")
            target = Path(tempfile.mkdtemp(dir=staging)) / "handin"
            limits = HandinLimits(self.max_bytes, self.max_files)
            copied = copy_handin(source, target, self.owner_of(candidate.student), limits)
        except RefusedHandin as refusal:
            self.refuse(candidate, str(refusal))
            return None
        except OSError as error:  # vanished or unreadable: refused, and collect goes on with the others
            self.refuse(candidate, f"it could not be read ({error.strerror})")
            return None
        (target / TIMESTAMP_FILE).write_text(copied.changed_at.strftime(TIME_FORMAT))
        return Accepted(target, copied.changed_at)

    def chosen(self, accepted: list[Accepted]) -> Accepted | None:
        """The hand-in that counts: the latest, or with ``before_duedate`` the latest before the due date."""
        latest = sorted(accepted, key=lambda handin: handin.changed, reverse=True)
        if self.before_duedate and self.duedate is not None:
            due = self.duedate.replace(tzinfo=UTC)
            on_time = [handin for handin in latest if handin.changed <= due]
            return (on_time or latest or [None])[0]
        return latest[0] if latest else None

    def copy_files(self) -> None:
        if not self.candidates:
            self.log.warning(f"No submissions of '{self.coursedir.assignment_id}' for course "
                             f"'{self.coursedir.course_id}' to collect")  # fmt: skip
        self.grading_folder.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".collect-", dir=self.grading_folder))
        try:
            for student, candidates in sorted(self.candidates.items()):
                accepted = [a for a in (self.verified(c, staging) for c in candidates) if a is not None]
                handin = self.chosen(accepted)
                if handin is not None:
                    self.take(student, handin)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            record_refusals(self.grading_folder, self.refused)

    def take(self, student: str, handin: Accepted) -> None:
        """Put the hand-in where grading reads it, unless the one already there is the same or newer."""
        assignment = self.coursedir.assignment_id
        dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment))
        new = handin.changed.replace(tzinfo=None)  # nbgrader's times are naive UTC
        if dest.is_dir():
            existing = self.coursedir.get_existing_timestamp(str(dest))
            newer = self.update and (existing is None or new > existing)
            if not (newer or (self.before_duedate and existing != new)):
                self.log.info(f"No newer submission to collect: {student} {assignment}")
                return
            self.log.info(f"Updating submission: {student} {assignment}")
            shutil.rmtree(dest)
        else:
            self.log.info(f"Collecting submission: {student} {assignment}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(handin.staged, dest)
