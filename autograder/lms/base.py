"""The registry of LMS formats, and what every format shares: its students, totals and points possible.

``export --format NAME`` looks the name up here; :func:`formats` imports every module of
:mod:`autograder.lms` first, so a module that registers a format is all a new LMS needs.
"""

import argparse
import importlib
import math
import pkgutil
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from autograder.course.course import Course
from autograder.course.notebooks import is_extra_credit
from autograder.pipeline.commands.collect import load_lms_students
from autograder.pipeline.storage.results import Status

if TYPE_CHECKING:  # building the CLI's parser imports every format: pandas and nbgrader load when export runs
    import pandas as pd

_REGISTRY: dict[str, type["LmsFormat"]] = {}


@dataclass
class LmsExport:
    """What an LMS export wrote, and what the instructor should know before importing it."""

    files: list[Path] = field(default_factory=list)
    students: int = 0  # rows of students written (summed over Moodle's files), or submissions given feedback
    left_out: list[str] = field(default_factory=list)  # students without an identifier of this LMS
    to_check: list[str] = field(default_factory=list)  # "student/assignment: why" of grades left out or not clean
    planned: list[str] = field(default_factory=list)  # what a dry run would have sent


class LmsFormat(ABC):
    """An LMS: the file its gradebook imports, and (``export --feedback``) the way feedback pages reach it."""

    name: ClassVar[str]  # --format NAME; also the "lms" of collect's grading/lms_students.json entries
    summary: ClassVar[str]  # one line for --format's help

    def __init__(self, course: Course) -> None:
        self.course = course

    @classmethod  # noqa: B027 (a hook: a format without options keeps it)
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        """Options of this format's ``export --feedback`` (none unless the format has some)."""

    @abstractmethod
    def write_grades(self, frame: "pd.DataFrame", output: Path) -> LmsExport:
        """Write the LMS's grade import from the plain export's rows (``export_frame``) to ``output``."""

    def send_feedback(self, args: argparse.Namespace) -> LmsExport:
        """Give the LMS each student's feedback pages (:meth:`feedback_pages`)."""
        raise SystemExit(f"export --format {self.name} --feedback: this format has no feedback route")

    def students(self) -> dict[str, dict]:
        """``{student: {"name", "ids": {assignment: id}}}`` of the students collect read from this LMS's download."""
        return {student: entry for student, entry in load_lms_students(self.course).items()
                if entry["lms"] == self.name}

    def points_possible(self, assignment: str) -> float:
        """Full marks: every graded cell, tests and written answers, but no extra credit."""
        from autograder.pipeline.storage.gradebook import grade_cells  # see TYPE_CHECKING above

        cells = grade_cells(self.course.grading.gradebook, assignment)
        return sum(cell.max_score for cell in cells if not is_extra_credit(cell.grade_id))

    def feedback_pages(self) -> dict[tuple[str, str], list[Path]]:
        """``{(assignment, student): pages}`` of each submission ``feedback`` wrote pages for (held ones have none)."""
        found = {}
        for folder in self.course.grading.feedback().glob("*/*"):
            pages = sorted(folder.glob("*.html"))
            if pages:
                found[folder.name, folder.parent.name] = pages
        return dict(sorted(found.items()))


def register(cls: type[LmsFormat]) -> type[LmsFormat]:
    """Class decorator: offer this format to ``export --format``."""
    _REGISTRY[cls.name] = cls
    return cls


def formats() -> dict[str, type[LmsFormat]]:
    """Every registered format by name, after importing each module of :mod:`autograder.lms`."""
    package = importlib.import_module("autograder.lms")
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"autograder.lms.{module.name}")
    return dict(sorted(_REGISTRY.items()))


def submission_totals(frame: "pd.DataFrame") -> dict[tuple[str, str], float]:
    """``{(assignment, student): total}`` of every submission handed in whose written answers are all graded."""
    return {(row["assignment"], row["student"]): float(row["total"]) for row in frame.to_dict("records")
            if row["status"] != str(Status.MISSING) and not pending_points(row)}


def handed_in(frame: "pd.DataFrame") -> set[tuple[str, str]]:
    """``(assignment, student)`` of every submission handed in, its written answers graded or not."""
    return {(row["assignment"], row["student"]) for row in frame.to_dict("records")
            if row["status"] != str(Status.MISSING)}


def pending_points(row: dict) -> float:
    """The points of the row's written answers not graded yet (0 for a row without the column)."""
    pending = row.get("points pending")
    return 0.0 if pending is None or math.isnan(pending) else float(pending)


def checks(frame: "pd.DataFrame") -> list[str]:
    """The submissions to look at before importing: not cleanly graded, or with written answers not graded yet."""
    found = []
    for row in frame.to_dict("records"):
        where = f"{row['student']}/{row['assignment']}"
        if row["status"] not in (str(Status.GRADED), str(Status.MISSING)):
            found.append(f"{where}: {row['status']}")
        if row["status"] != str(Status.MISSING) and pending_points(row):
            found.append(f"{where}: {score_text(pending_points(row))} points of written answers not graded yet, "
                         "grade left out")
    return found


def score_text(score: float | None) -> str:
    return "" if score is None else f"{score:g}"


def write_table(rows: list, columns: list[str], path: Path) -> None:
    """The LMS's file: ``rows`` (lists, or dicts by column) under ``columns``, an empty cell for what a row lacks."""
    import pandas as pd  # see TYPE_CHECKING above

    from autograder.pipeline.commands.csv_cells import write_csv

    write_csv(pd.DataFrame(rows, columns=columns, dtype=object).fillna(""), path)
