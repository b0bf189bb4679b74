"""A student's ``nbgrader submit`` on the hub: a hand-in only its student and the instructors can read.

nbgrader 0.9.6's submit leaves the hand-in folder in the exchange open to everyone (0777, so
that an instructor can delete it) with its files readable by all (0644), and logs the folder's
full name, whose random part is all that hides it from other students: whoever reads that log
can read the submission secret (and with it the student's feedback page) and replace the
hand-in. Here the folder is 0750 and its files 0640, in the group of the exchange's inbound
folder (the instructors', inherited through its set-group-id bit), and the log names the folder
without its random part. The hub's shared nbgrader settings select it for every user
(``ExchangeFactory.submit``); an attacker can bypass it for their own hand-ins, never for another's.

Before anything is handed in, what would be handed in is measured with the instructors' collect's
own code and limits (:func:`autograder.pipeline.exchange.handins.measure_handin`; the limits from the
``SafeExchangeCollect`` settings every user of the hub reads, with the same defaults): a folder over
the limits, or holding a link, a pipe or a device, is refused here with a message in the student's
edition (:mod:`tfcourse.language`), which nbgrader shows in the Assignments tab
and on the command line, instead of being "Submitted" and then refused at collect. Once copied into
the exchange, the hand-in is measured again as collect will see it (its owner, with nbgrader's two
marks): one that collect would refuse is removed and the student told, as is one that a full disk
cut short (collect would take it as the newest). ``CheckedNgshareSubmit`` makes the same check
before ngshare-exchange's submit uploads anything (the ngshare hub's settings name it).
"""

import errno
import os
import secrets
import shutil
import stat
from pathlib import Path

from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.utils import ignore_patterns

from autograder.pipeline.exchange.handins import (
    MAX_BYTES,
    MAX_FILES,
    HandinLimits,
    Ignore,
    RefusedHandin,
    kind_of,
    measure_handin,
)
from classroom.student_view import ENGLISH, read_view, say
from classroom.submit_guard import check_before_submit

FOLDER_MODE = 0o750  # owner rwx, instructors r-x (the group the inbound's set-group-id bit gave), others nothing
FILE_MODE = 0o640
LIMITS_SECTION = "SafeExchangeCollect"  # the settings the instructors' collect reads its limits from
# What a refusal says in a translated edition is its reason by rule (RefusedHandin.rule), in the hub's catalogs
# (classroom/locale); English is the refusal's own message, and a rule not listed here is said in English.
REASONS = {
    "kind": "{where} is {kind}: a hand-in holds plain files and folders only",
    "owner": "{where} belongs to another account (uid {uid}), not the student it names",
    "files": "more than {limit} files and folders (the limit the instructor set)",
    "bytes": "more than {limit:,} bytes (the limit the instructor set; each file counts for the larger of its size "
    "and the disk it takes), reached at {where} ({size:,} bytes)",
    "depth": "{where}: folders nested more than {limit} deep",
    "name": "{where}: a name with control characters",
    "changed": "{where} changed while it was read",
    "folder": "the hand-in is not a folder that can be opened ({error})",
}
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
MESSAGE_DISK_FULL = (
    "Not handed in: the exchange's disk is full ({error}). Nothing was handed in, and your earlier hand-in "
    "(if any) is kept as it was: tell your instructor, and submit again once there is room."
)
# ngshare-exchange's submit logs "Failed to submit." and returns when ngshare does not answer (restarting, down):
# nbgrader would then say nothing more, and the Assignments tab would show the submit as done.
MESSAGE_NOT_CONFIRMED = (
    "Not confirmed: the course's exchange (ngshare) did not answer this hand-in (it may be restarting). "
    "Your earlier hand-in (if any) is kept as it was: submit again in a minute, and tell your instructor if this "
    "message comes back."
)
MESSAGE = (
    "Not handed in: {reason}. Nothing was handed in: remove or fix it and submit again (the limits: "
    "{limits.max_bytes:,} bytes, {limits.max_files} files and folders, plain files and folders only)."
)


def disk_full(error: BaseException) -> int | None:
    """ENOSPC or EDQUOT if ``error`` says the disk is full, else None. copytree gathers its errors in one
    ``shutil.Error`` whose entries keep only each error's text ("[Errno 28] No space left on device: ...")."""
    if isinstance(error, shutil.Error):
        texts = [str(entry[-1]) for entry in error.args[0]] if error.args and isinstance(error.args[0], list) else []
        return next((code for code in DISK_FULL for text in texts if text.startswith(f"[Errno {code}]")), None)
    if isinstance(error, OSError) and error.errno in DISK_FULL:
        return error.errno
    return None


def student_edition(notebook: Path) -> str:
    """The student's edition: ``TFCOURSE_EDITION``, else the hub's word (the student view, as the submit's other
    questions use), else the one the assignment's notebook names, else English.

    Only a plain file is read: the folder may hold a pipe (which is why it is refused), and opening one blocks.
    """
    from tfcourse.language import EDITION_VARIABLE, EDITIONS, notebook_edition  # only when refusing

    chosen = os.environ.get(EDITION_VARIABLE, "").strip()
    if chosen in EDITIONS:
        return chosen
    view = read_view()
    if view is not None:
        return view.language
    try:
        plain = stat.S_ISREG(os.lstat(notebook).st_mode)
    except OSError:
        return ENGLISH
    return (notebook_edition(notebook) if plain else None) or ENGLISH


def refusal_message(refusal: RefusedHandin, limits: HandinLimits, notebook: Path) -> str:
    """Why the hand-in was refused, in the edition of the assignment's ``notebook``."""
    edition = student_edition(notebook)
    reason = str(refusal)
    if edition != ENGLISH and refusal.rule in REASONS:
        facts = dict(refusal.facts)
        if "kind" in facts:
            facts["kind"] = say(edition, kind_of(int(facts["kind"])))
        reason = say(edition, REASONS[refusal.rule], **facts)
    return say(edition, MESSAGE, reason=reason, limits=limits)


class HandinChecks:
    """The check before a hand-in, for a submit of either exchange (nbgrader's ``Exchange``: ``fail``, ``config``)."""

    @property
    def limits(self) -> HandinLimits:
        """The limits collect applies: the same settings (``c.SafeExchangeCollect.max_bytes``, ``max_files``)."""
        section = self.config[LIMITS_SECTION] if LIMITS_SECTION in self.config else {}
        return HandinLimits(int(section.get("max_bytes", MAX_BYTES)), int(section.get("max_files", MAX_FILES)))

    def check_handin(self, folder: str, owner: int | None, ignore: Ignore | None = None) -> None:
        """Fail, saying why in the student's edition, if collect would refuse ``folder`` as a hand-in."""
        try:
            measure_handin(Path(folder), owner, self.limits, ignore)
        except RefusedHandin as refusal:
            self.fail(refusal_message(refusal, self.limits, self.notebook))
        except OSError as error:
            unreadable = RefusedHandin(f"it could not be read ({error.strerror})")
            self.fail(refusal_message(unreadable, self.limits, self.notebook))

    @property
    def notebook(self) -> Path:
        """The assignment's notebook in the student's folder, whose edition the messages take."""
        return Path(self.src_path) / f"{self.coursedir.assignment_id}.ipynb"


class PrivateSubmit(HandinChecks, ExchangeSubmit):
    def copy_files(self) -> None:
        self.init_release()
        secret = secrets.token_hex(64)  # names the feedback page (nbgrader's notebook_hash)
        dest = os.path.join(self.inbound_path, self.assignment_filename)
        cache = os.path.join(self.cache_path, self.assignment_filename.rsplit("+", 1)[0])
        self.log.info("Source: %s", self.src_path)
        self.log.info("Destination: %s", os.path.join(self.inbound_path, self.assignment_filename.rsplit("+", 1)[0]))
        self.check_filename_diff()
        # Before anything reads a file of the folder (a pipe blocks its reader) or a byte goes to the exchange:
        self.check_handin(self.src_path, None, self.patterns())
        check_before_submit(self)  # the same as the last hand-in? after the due date? (asks, hands nothing in)
        previous = os.umask(0o027)  # what is made here starts closed to other students
        try:
            # The folder first, with the marks, while it still has the inbound's set-group-id bit:
            # copytree's copystat clears that bit (a student is not in the instructors' group and
            # cannot set it again), and a file made after that would be in the student's own group.
            try:
                os.mkdir(dest)
                self.mark(dest, secret)
                self.do_copy(self.src_path, dest)
                self.set_perms(dest, fileperms=FILE_MODE, dirperms=FOLDER_MODE)
                self.check_handin(dest, os.getuid())  # as collect will measure it
            except BaseException as error:
                shutil.rmtree(dest, ignore_errors=True)  # nothing half handed in (a full disk, a refusal)
                full = disk_full(error)
                if full is not None:
                    self.fail(say(student_edition(self.notebook), MESSAGE_DISK_FULL, error=os.strerror(full)))
                raise
        finally:
            os.umask(previous)
        os.makedirs(self.cache_path, exist_ok=True)  # the student's own copy, which fetch_feedback reads
        self.do_copy(self.src_path, cache)
        self.mark(cache, secret)
        self.log.info("Submitted as: %s %s %s", self.coursedir.course_id, self.coursedir.assignment_id, self.timestamp)

    def patterns(self) -> Ignore:
        """What nbgrader's copy leaves out: its ignore and include patterns, files over its size limit."""
        return ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                               max_file_size=self.coursedir.max_file_size, log=self.log)

    def do_copy(self, src: str, dest: str, log=None) -> None:
        """nbgrader's copy (its size limit, its ignore and include patterns) into a folder that may exist."""
        size = self.get_size(src)
        if size > 1000 * self.coursedir.max_dir_size:
            self.log.error("Directory size is too big")
            limit = 1000 * self.coursedir.max_dir_size
            raise RuntimeError(f"Directory size is too big. Size is {size}, maximum size is {limit}")
        shutil.copytree(src, dest, ignore=self.patterns(), dirs_exist_ok=True)

    def mark(self, folder: str, secret: str) -> None:
        """The two files nbgrader's submit writes beside the notebooks."""
        with open(os.path.join(folder, "timestamp.txt"), "w") as handle:
            handle.write(self.timestamp)
        with open(os.path.join(folder, "submission_secret.txt"), "w") as handle:
            handle.write(secret)


def __getattr__(name: str) -> type:
    """``CheckedNgshareSubmit``: ngshare-exchange's submit, after the same check. Made on first use, as
    ngshare_exchange is imported only where the hub's settings name it (its import needs the user's name)."""
    if name != "CheckedNgshareSubmit":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ngshare_exchange import ExchangeSubmit as NgshareSubmit

    class CheckedNgshareSubmit(HandinChecks, NgshareSubmit):
        def copy_files(self) -> None:
            self.check_handin(self.src_path, None, self.left_out)  # before a file is read or a byte uploaded
            super().copy_files()
            if self.timestamp is None:  # ngshare did not answer: ngshare-exchange logged an error and returned
                self.fail(say(student_edition(self.notebook), MESSAGE_NOT_CONFIRMED))

        def _get_assignment_notebooks(self, course_id: str, assignment_id: str) -> list[str] | None:
            """The released notebooks the hand-in is checked against, without the translated editions' (they are
            fetched in the English ones' place, :mod:`classroom.ngshare_edition`, never handed in beside them)."""
            from classroom.ngshare_edition import is_edition_path

            released = super()._get_assignment_notebooks(course_id, assignment_id)
            return None if released is None else [path for path in released if not is_edition_path(path)]

        def left_out(self, folder: str, names: list[str]) -> set[str]:
            """What ngshare-exchange's upload leaves out: plain files its per-file patterns match (a pipe it
            would open, and block on, before asking; a folder it never asks about)."""
            leaves_out = self.ignore_patterns()
            sizes = {name: os.lstat(os.path.join(folder, name)) for name in names}
            return {name for name, info in sizes.items()
                    if stat.S_ISREG(info.st_mode) and leaves_out(folder, name, info.st_size)}

    globals()[name] = CheckedNgshareSubmit
    return CheckedNgshareSubmit
