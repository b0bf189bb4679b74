"""Every path inside a course's grading folder, spelled in one place.

The grading folder (``grading/`` under the course root, git-ignored) holds what nbgrader and
the grader write: ``submitted/<student>/<assignment>/``, ``autograded/...``, ``feedback/...``,
``results/<assignment>/<student>.json``, the merged ``gradebook.db`` and the grader's own
files. nbgrader's settings (:func:`autograder.course.settings.configure`) and every step of
the pipeline take their paths from :class:`GradingFolder`.
"""

from dataclasses import dataclass
from pathlib import Path

GRADING_DIRECTORY = "grading"  # under the course root; git-ignored
EXPORT_FILE = "grades.csv"  # export's output in the grading folder, unless --output says otherwise
SUBMITTED, AUTOGRADED, FEEDBACK, RESULTS = "submitted", "autograded", "feedback", "results"
GRADEBOOK = "gradebook.db"
# When nbgrader received a submission (submit writes it, collect copies it): in the submission's
# folder, and beside its feedback, where release_feedback looks for it.
TIMESTAMP_FILE = "timestamp.txt"
# What nbgrader submit writes beside the notebooks and release_feedback reads beside the feedback.
SUBMISSION_MARKS = (TIMESTAMP_FILE, "submission_secret.txt")


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy address of the gradebook at ``path``, as nbgrader's ``db_url`` takes it."""
    return f"sqlite:///{Path(path).resolve()}"


@dataclass(frozen=True)
class GradingFolder:
    """The grading folder of the course at ``root``; ``directory`` is its name under the root."""

    root: Path
    directory: str = GRADING_DIRECTORY

    @property
    def path(self) -> Path:
        return Path(self.root) / self.directory

    @property
    def gradebook(self) -> Path:
        return self.path / GRADEBOOK

    def file(self, name: str) -> Path:
        """One of the grader's own files at the top of the grading folder."""
        return self.path / name

    def submitted(self, student: str = "", assignment: str = "") -> Path:
        return self.path.joinpath(SUBMITTED, student, assignment)

    def autograded(self, student: str = "", assignment: str = "") -> Path:
        return self.path.joinpath(AUTOGRADED, student, assignment)

    def feedback(self, student: str = "", assignment: str = "") -> Path:
        return self.path.joinpath(FEEDBACK, student, assignment)

    def results(self, assignment: str = "") -> Path:
        return self.path.joinpath(RESULTS, assignment)
