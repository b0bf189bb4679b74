"""One grading job: which submission, against which assignment, under which limits."""

from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.paths import GRADING_DIRECTORY
from autograder.launch.limits import Limits
from autograder.pipeline.cell_limits import CellLimits
from autograder.pipeline.gradebook import GradeCellInfo


@dataclass(frozen=True)
class GradeJob:
    root: Path
    assignment: str
    student: str
    submission: Path
    template_db: Path  # a gradebook holding only the assignment's definition
    limits: Limits = field(default_factory=Limits)
    grading_directory: str = GRADING_DIRECTORY
    clean_rerun: bool = True
    sandbox: bool = True  # run student code under bwrap (see autograder.launch.sandbox)
    cell_limits: CellLimits | None = None  # None: every cell gets the cell timeout
    cells: tuple[GradeCellInfo, ...] = ()  # the assignment's grade cells, read once by grade()


def readable_data(root: Path) -> list[Path]:
    """Course files a notebook may read while graded: the data folder, when the course has one."""
    return [path for path in [root / "data"] if path.is_dir()]
