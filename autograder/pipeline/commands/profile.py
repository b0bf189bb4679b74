"""Where a grading job's seconds go: the mean time of each phase per assignment, beside the notebook's own.

Every job records the seconds of its phases in ``SubmissionResult.phases`` (see
:mod:`autograder.pipeline.job.runner`): starting the zygotes (only where a worker's
zygotes were not started before its first job, or one died), reading and scanning the
submission, copying the course, nbgrader's run around the cells (``kernel: nbgrader``), the
cells themselves (``kernel: cells``), reading the scores back, keeping the autograded copy, the
clean re-run (``zygote start`` excluded) and the merge into the gradebook. ``grade --profile``
and ``autograder.benchmark`` print this table.
"""

from collections.abc import Iterable

from autograder.course.course import Course
from autograder.pipeline.storage.reference_times import load_times, sources_digest
from autograder.pipeline.storage.results import Status, SubmissionResult

PHASES = ("zygote start", "read and scan", "course copy", "kernel: nbgrader", "kernel: cells", "read back",
          "keep autograded", "clean re-run", "merge")
# The notebook's own compute: what is left of a job without them is the grader's overhead.
OWN_COMPUTE = ("kernel: cells", "clean re-run")


def mean_phases(results: Iterable[SubmissionResult]) -> dict[str, float]:
    """The mean seconds per phase over the jobs that ran (missing submissions have none)."""
    ran = [r for r in results if r.status != Status.MISSING and r.phases]
    if not ran:
        return {}
    names = list(PHASES) + sorted({name for r in ran for name in r.phases} - set(PHASES))
    return {name: sum(r.phases.get(name, 0.0) for r in ran) / len(ran) for name in names}


def overhead(phases: dict[str, float]) -> float:
    """Seconds of a mean job spent outside the notebook's own compute (kernel cells and clean re-run)."""
    return sum(seconds for name, seconds in phases.items() if name not in OWN_COMPUTE)


def phase_table(results: Iterable[SubmissionResult], reference_cells: dict[str, float]) -> list[str]:
    """One row per assignment: the mean of each phase, the overhead, and the reference answers' own cell time."""
    by_assignment: dict[str, list[SubmissionResult]] = {}
    for result in results:
        by_assignment.setdefault(result.assignment, []).append(result)
    header = f"{'assignment':24s} {'jobs':>4s} " + " ".join(f"{name:>10.10s}" for name in PHASES)
    lines = [header + f" {'overhead':>9s} {'reference':>9s}"]
    for assignment, group in sorted(by_assignment.items()):
        phases = mean_phases(group)
        if not phases:
            continue
        jobs = sum(r.status != Status.MISSING and bool(r.phases) for r in group)
        cells = " ".join(f"{phases.get(name, 0.0):10.2f}" for name in PHASES)
        reference = reference_cells.get(assignment)
        shown = f"{reference:9.2f}" if reference is not None else f"{'-':>9s}"
        lines.append(f"{assignment:24s} {jobs:4d} {cells} {overhead(phases):9.2f} {shown}")
    return lines


def reference_cell_seconds(course: Course, assignments: Iterable[str]) -> dict[str, float]:
    """The kept reference run's total cell time per assignment (those timed for their current notebooks)."""
    found = {}
    for assignment in assignments:
        times = load_times(course.grading, assignment, sources_digest(course.source_folder(assignment)))
        if times:
            found[assignment] = sum(sum(cells.values()) for cells in times.values())
    return found
