"""Manual grading in formgrader survives a re-grade, and the export carries it."""

import pytest
from nbgrader.api import Gradebook

from autograder.course.paths import sqlite_url
from autograder.pipeline.commands.export import export_frame
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import Status, SubmissionResult, save_result
from autograder.pipeline.storage.results import TestResult as CellResult  # (a Test* name would be collected by pytest)
from tests.grader.hostile_class import ASSIGNMENT, points_per_test
from tests.support.course import ThrowawayCourse

pytestmark = pytest.mark.slow


def graded(scores: dict[str, float]) -> SubmissionResult:
    points = points_per_test()
    tests = [CellResult(ASSIGNMENT, name, points[name], score=scores.get(name, 0.0)) for name in points]
    return SubmissionResult(ASSIGNMENT, "ann", Status.GRADED, tests=tests)


def test_manual_scores_survive_a_regrade_and_reach_the_export(throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course(ASSIGNMENT, release=False)
    db = course.grading.gradebook
    db.parent.mkdir()
    gradebook.define_assignment(course, ASSIGNMENT, db)
    points = points_per_test()
    first = graded({name: p for name, p in points.items()})  # full marks from the kernel
    with Gradebook(sqlite_url(db)) as gb:
        gradebook.merge(gb, first)

    # The instructor grades a written answer and overrides one autograded cell in formgrader.
    with Gradebook(sqlite_url(db)) as gb:
        gb.find_grade("written_sqrt_dk", ASSIGNMENT, ASSIGNMENT, "ann").manual_score = 1.5
        gb.find_grade("sdpa_values", ASSIGNMENT, ASSIGNMENT, "ann").manual_score = 0.5
        gb.db.commit()

    regraded = graded({name: p for name, p in points.items() if name != "causal_mask_values"})
    with Gradebook(sqlite_url(db)) as gb:
        gradebook.merge(gb, regraded)
    save_result(course, regraded)

    with Gradebook(sqlite_url(db)) as gb:
        assert gb.find_grade("written_sqrt_dk", ASSIGNMENT, ASSIGNMENT, "ann").manual_score == 1.5
        override = gb.find_grade("sdpa_values", ASSIGNMENT, ASSIGNMENT, "ann")
        assert override.manual_score == 0.5 and override.score == 0.5
        assert gb.find_grade("causal_mask_values", ASSIGNMENT, ASSIGNMENT, "ann").auto_score == 0.0

    row = export_frame(course).set_index("student").loc["ann"]
    assert row[f"{ASSIGNMENT}:written_sqrt_dk"] == 1.5
    assert row[f"{ASSIGNMENT}:sdpa_values"] == 0.5  # the override replaces the kernel's 2 points
    expected = sum(points.values()) - points["causal_mask_values"] - points["sdpa_values"] + 0.5 + 1.5
    assert row[f"{ASSIGNMENT} total"] == expected and row["total"] == expected
