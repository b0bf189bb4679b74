"""``grade`` for the suite's throw-away courses, on a process pool that a test worker keeps between gradings.

``grade`` runs its jobs on a ``concurrent.futures`` executor whose worker processes keep their
zygotes (:class:`autograder.pipeline.job.runner.Runner`) from job to job; left to itself it makes a
new pool per run, whose zygotes start again (their imports take seconds of CPU per notebook: see
docs/measurements.md). A throw-away course has no data folder, so its zygotes' sandbox is every
other throw-away course's, and one notebook's zygotes can serve the next course that grades it. So a
test worker keeps one pool per job count, for one notebook set at a time: a run of other notebooks
replaces it (its zygotes end with its processes), which bounds the memory the kept zygotes hold.
The gradings that follow one another on a worker are those of a notebook's seed course and its
graded class, and the hostile class graded three times.

The pools' processes come from a fork server, not from a fork of the test worker: a forked process
kept for the run holds a copy of every pipe the worker has open, Playwright's to its driver among
them, and the driver, which exits when its input closes, never saw it close: the worker hung at the
end of the session, when its browser was closed (once, in a full run).
"""

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from autograder.course.course import Course
from autograder.pipeline.commands.grade import GradeOptions, grade
from autograder.pipeline.storage.results import SubmissionResult


@dataclass
class KeptPool:
    assignments: tuple[str, ...]
    executor: ProcessPoolExecutor


_pools: dict[int, KeptPool] = {}
FORK_SERVER = multiprocessing.get_context("forkserver")
FORK_SERVER.set_forkserver_preload(["autograder.pipeline.commands.grade"])  # each pool process starts with it imported


def pool_for(jobs: int, assignments: tuple[str, ...]) -> ProcessPoolExecutor:
    """This worker's pool of ``jobs`` processes for these assignments: the kept one, or a new one in its place."""
    kept = _pools.get(jobs)
    if kept is not None and kept.assignments == assignments:
        return kept.executor
    if kept is not None:
        kept.executor.shutdown()
    _pools[jobs] = KeptPool(assignments, ProcessPoolExecutor(max_workers=jobs, mp_context=FORK_SERVER))
    return _pools[jobs].executor


def grade_on_kept_pool(course: Course, *, jobs: int, **options) -> list[SubmissionResult]:
    """``grade`` with ``GradeOptions(jobs=jobs, **options)`` on this worker's kept pool for the course's assignments."""
    assignments = tuple(options.get("assignments") or course.assignments())
    return grade(course, GradeOptions(jobs=jobs, **options), pool_for(jobs, assignments))


def shut_down() -> None:
    """End the kept pools and their zygotes (at the end of the worker's session: see tests/conftest.py)."""
    for kept in _pools.values():
        kept.executor.shutdown()
    _pools.clear()
