"""``grade --scheduler``: the same jobs on a dask.distributed cluster (a LocalCluster here)."""

import distributed  # a pinned requirement: this test never skips
import pytest

from autograder.pipeline.commands.grade import GradeOptions, grade
from autograder.pipeline.storage.results import Status
from tests.grader.hostile_class import ASSIGNMENT, LIMITS, Case, release, solution, submit
from tests.support.course import ThrowawayCourse

pytestmark = pytest.mark.slow


def test_grading_on_a_dask_cluster(throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course(ASSIGNMENT, seeded=True)
    submit(course, Case("good", lambda course: solution()))
    submit(course, Case("blank", lambda course: release()))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            options = GradeOptions([ASSIGNMENT], jobs=2, limits=LIMITS, progress=False)
            results = grade(course, options, client.get_executor())
    scores = {r.student: (r.status, r.score) for r in results}
    assert scores == {"good": (Status.GRADED, 16.0), "blank": (Status.GRADED, 0.0)}
