"""``sanitize``: check (with ``--write``, repair) every submission against its release, with the job's own repairs
(:mod:`autograder.pipeline.job.sanitize`), each notebook taken as ``grade`` takes it; counting what it checked."""

from dataclasses import dataclass, field

import nbformat

from autograder.course.course import Course
from autograder.pipeline.exchange.handin_names import find_notebooks
from autograder.pipeline.job.sanitize import sanitize_notebook


@dataclass
class SanitizeRun:
    """What ``sanitize`` found, a line per finding, and what it checked."""

    lines: list[str] = field(default_factory=list)
    notebooks: int = 0
    students: set[str] = field(default_factory=set)
    to_repair: int = 0  # notebooks that need a repair (with ``write``: that were repaired)
    unreadable: int = 0

    def summary(self, write: bool) -> str:
        checked = f"checked {self.notebooks} notebooks of {len(self.students)} students"
        found = []
        if self.to_repair and write:
            found.append(f"repaired {self.to_repair}")
        elif self.to_repair:
            found.append(f"{self.to_repair} need repairs (--write applies them; grade repairs its own copy)")
        if self.unreadable:
            found.append(f"{self.unreadable} unreadable (grade reports them)")
        return f"{checked}: {'; '.join(found) or 'nothing to repair'}"


def sanitize_submissions(
    course: Course, assignments: list[str], students: list[str] | None = None, write: bool = False
) -> SanitizeRun:
    """Check (with ``write``, repair) the submitted notebook of each student and assignment against its release."""
    run = SanitizeRun()
    submitted = course.grading.submitted()
    for assignment in assignments:  # one notebook per assignment, named like it
        release = nbformat.read(course.release_notebook(assignment), as_version=4)
        for folder in sorted(path for path in submitted.glob(f"*/{assignment}") if path.is_dir()):
            student = folder.parent.name
            if students and student not in students:
                continue
            files = find_notebooks(folder, [assignment])
            run.lines += [f"{student:20s} {assignment}: {note}" for note in files.notes()]
            if assignment not in files.taken:
                continue
            run.notebooks += 1
            run.students.add(student)
            path = folder / files.taken[assignment]
            try:
                notebook, repairs = sanitize_notebook(nbformat.read(path, as_version=4), release)
                if write and repairs:
                    nbformat.write(notebook, path)
            except Exception as error:  # report it and go on with the others
                run.lines.append(f"{student:20s} {assignment}: unreadable ({type(error).__name__})")
                run.unreadable += 1
                continue
            run.to_repair += bool(repairs)
            run.lines += [f"{student:20s} {assignment}: {repair}" for repair in repairs]
    return run
