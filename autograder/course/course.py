"""The course as one object: its root, its grading folder and nbgrader's settings for it.

A :class:`Course` is built once from a root (the command line's ``--root``, the repository by
default, a temporary folder in the tests and the benchmark) and handed to every step of the
pipeline. The names it builds paths from are defined once, in :mod:`autograder.course.settings`
and :mod:`autograder.course.paths`.
"""

import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from traitlets.config import Config

from autograder.course import settings
from autograder.course.deadlines import read_due_dates
from autograder.course.paths import GRADING_DIRECTORY, GradingFolder


@dataclass(frozen=True)
class Course:
    """The course rooted at ``root``, grading into ``root/grading_directory``; picklable, so jobs carry it."""

    root: Path
    grading_directory: str = GRADING_DIRECTORY
    grading: GradingFolder = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        root = Path(self.root).resolve()
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "grading", GradingFolder(root, self.grading_directory))

    @classmethod
    def default(cls) -> "Course":
        """This repository's course."""
        return cls(settings.REPO_ROOT)

    def assignments(self) -> list[str]:
        return settings.assignment_ids(self.root)

    def source_notebook(self, assignment: str) -> Path:
        return settings.source_notebook(assignment, self.root)

    def release_notebook(self, assignment: str) -> Path:
        return settings.release_notebook(assignment, self.root)

    def source_folder(self, assignment: str) -> Path:
        """The folder of the assignment's source notebooks (one per assignment in this course)."""
        return self.source_notebook(assignment).parent

    def release_folder(self, assignment: str) -> Path:
        return self.release_notebook(assignment).parent

    def data_folders(self) -> list[Path]:
        """Course files a notebook may read while graded: the data folder, when the course has one."""
        return [path for path in [self.root / settings.DATA_DIRECTORY] if path.is_dir()]

    def due_dates(self) -> dict[str, datetime]:
        """Each assignment's due date (UTC), from the course's ``due_dates.csv`` (none: no deadline)."""
        return read_due_dates(self.root, self.assignments())

    def config(self) -> Config:
        """A fresh nbgrader ``Config`` for this course (creates the grading folder)."""
        return settings.course_config(self.root, self.grading_directory)

    def copy_to(self, root: Path, assignments: Iterable[str], release: bool = True) -> "Course":
        """A throw-away course at ``root`` with these assignments' source (and release) notebooks copied in."""
        parts = (settings.SOURCE_DIRECTORY, settings.RELEASE_DIRECTORY) if release else (settings.SOURCE_DIRECTORY,)
        for assignment in assignments:
            for part in parts:
                shutil.copytree(self.root / part / assignment, Path(root) / part / assignment)
        return Course(root, self.grading_directory)
