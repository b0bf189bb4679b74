"""nbgrader's release feedback to the filesystem exchange, one student at a time.

nbgrader 0.9.6's release feedback walks every ``grading/feedback/<student>/<assignment>/*.html``
and opens the ``timestamp.txt`` and ``submission_secret.txt`` beside each page unchecked: the
first feedback folder that lacks one (a hand-in made without nbgrader's submit, a page written by
hand) stops it with a traceback, and every student after that one gets nothing. It also logs
where each page went (``feedback/<hash>.html``), and that name is all that keeps a student's
page from the others. This class replaces it through ``ExchangeFactory.release_feedback`` (set
by :func:`autograder.course.settings.configure`), so formgrader's release-feedback button and
``nbgrader release_feedback`` both use it: each student's folder is checked whole
(:mod:`.submission_marks`) before any page of it is copied, one that fails is skipped with its reason, and the log
never names a page or a secret (what the instructor sees: docs/running-a-class.md). Only the filesystem exchange:
on the ngshare hub, ngshare's own exchange classes replace this one.
"""

import glob
import os
import shutil
import stat
from pathlib import Path

from nbgrader.exchange import ExchangeError
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash

from autograder.course.paths import TIMESTAMP_FILE
from autograder.pipeline.exchange.handins import kind_of, safe_name
from autograder.pipeline.exchange.submission_marks import BadMark, read_mark, read_secret

SHOWN_TIME = 40  # characters of timestamp.txt shown in the log (collect writes 30)


class SkippedFeedback(ValueError):
    """Why a student's feedback was not released (no secret, no page name in it)."""


def kind_name(mode: int) -> str:
    return "a folder" if stat.S_ISDIR(mode) else "a plain file" if stat.S_ISREG(mode) else kind_of(mode)


class SafeReleaseFeedback(ExchangeReleaseFeedback):
    def feedback_folders(self) -> list[tuple[str, Path]]:
        """``(student, folder)`` for each student whose feedback folder for the assignment exists (in any form).

        ``--student`` may be an id or a glob pattern, as for nbgrader's own release feedback.
        """
        wanted = self.coursedir.student_id or "*"
        assignment = glob.escape(self.coursedir.assignment_id)
        pattern = self.coursedir.format_path(self.coursedir.feedback_directory, wanted, assignment)
        return sorted((Path(path).parent.name, Path(path)) for path in glob.glob(pattern))

    def copy_files(self) -> None:
        excluded = set(filter(None, self.coursedir.student_id_exclude.split(",")))
        released: list[str] = []
        skipped: dict[str, str] = {}
        for student, folder in self.feedback_folders():
            if student in excluded:
                self.log.debug("Skipping student '%s' (excluded)", safe_name(student))
                continue
            try:
                if self.release_student(student, folder):
                    released.append(student)
            except (SkippedFeedback, BadMark) as why:
                skipped[student] = str(why)
            except OSError as error:  # unreadable, or the exchange refused the copy: this student only
                skipped[student] = f"it could not be released ({error.strerror})"
            if student in skipped:
                self.log.warning("Skipped the feedback of '%s' on '%s': %s",
                                 safe_name(student), self.coursedir.assignment_id, skipped[student])
        summary = f"Released the feedback of {len(released)} student(s) on '{self.coursedir.assignment_id}'"
        if not skipped:
            self.log.info(summary)
            return
        summary += f"; skipped {len(skipped)}: " + "; ".join(f"{safe_name(s)} ({why})" for s, why in skipped.items())
        self.log.error(summary)
        raise ExchangeError(summary)

    def release_student(self, student: str, folder: Path) -> int:
        """Release every page of one student's feedback folder (checked whole first); returns how many."""
        mode = os.lstat(folder).st_mode
        if not stat.S_ISDIR(mode):
            raise SkippedFeedback(f"its feedback folder is {kind_name(mode)}, not a folder")
        pages = sorted(folder / name for name in os.listdir(folder) if name.endswith(".html"))  # unreadable: raises
        for page in pages:
            mode = os.lstat(page).st_mode
            if not stat.S_ISREG(mode):
                raise SkippedFeedback(f"{safe_name(page.name)} is {kind_name(mode)}, not a feedback page")
        if not pages:
            self.log.debug("No feedback page for '%s'", safe_name(student))
            return 0
        timestamp = safe_name(read_mark(folder, TIMESTAMP_FILE).strip())[:SHOWN_TIME]
        secret = read_secret(folder)
        for page in pages:
            self.release_page(page, notebook_hash(secret=secret, notebook_id=page.stem))
            self.log.info("Released feedback for student '%s' on assignment '%s/%s/%s' (%s)",
                          safe_name(student), self.coursedir.course_id, self.coursedir.assignment_id,
                          safe_name(page.stem), timestamp)
        return len(pages)

    def release_page(self, page: Path, checksum: str) -> None:
        """Copy the page to the exchange under its hashed name, replacing any earlier one at once (as nbgrader does)."""
        temporary = Path(self.dest_path) / f"{checksum}-tmp.html"
        try:
            shutil.copy(page, temporary)
            os.replace(temporary, Path(self.dest_path) / f"{checksum}.html")
        finally:
            if temporary.exists():
                temporary.unlink()
