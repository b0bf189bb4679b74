"""One grading job: which submission, against which assignment, under which limits."""

from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.course import Course
from autograder.launch.limits import Limits
from autograder.pipeline.job.cell_limits import CellLimits
from autograder.pipeline.storage.gradebook import GradeCellInfo


@dataclass(frozen=True)
class GradeJob:
    course: Course
    assignment: str
    student: str
    submission: Path
    template_db: Path  # a gradebook holding only the assignment's definition
    limits: Limits = field(default_factory=Limits)
    clean_rerun: bool = True
    sandbox: bool = True  # run student code under bwrap (see autograder.launch.sandbox)
    cell_limits: CellLimits | None = None  # None: every cell gets the cell timeout
    cells: tuple[GradeCellInfo, ...] = ()  # the assignment's grade cells, read once by grade()

