"""Extra credit: the optional exercises' tests count on top of full marks, in every export.

No kernel runs: the scores are written as ``grade`` writes them (a result per submission, merged
into a gradebook holding nbgrader's own definition of notebook 07, whose "Going further" section
has extra-credit tests). nbgrader's extra credit is manual only; the grader's is its tests whose
grade id starts with ``extra_credit_``.
"""

import shutil

import nbformat
from nbgrader.api import Gradebook

from autograder.course.notebooks import grade_id, is_extra_credit, is_graded_test_cell, nbgrader_meta
from autograder.course.paths import GRADEBOOK
from autograder.course.settings import source_notebook
from autograder.lms.canvas import Canvas
from autograder.pipeline.commands.export import export_frame
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import Status, SubmissionResult, save_result
from autograder.pipeline.storage.results import TestResult as CellResult  # (a Test* name would be collected by pytest)
from tests.support.course import ThrowawayCourse

ASSIGNMENT = "07_language_model"


def test_extra_credit_counts_on_top_of_full_marks(throwaway_course: ThrowawayCourse, tmp_path) -> None:
    source = nbformat.read(source_notebook(ASSIGNMENT), as_version=4)
    points = {grade_id(c): float(nbgrader_meta(c)["points"]) for c in source.cells if is_graded_test_cell(c)}
    extra = {name: p for name, p in points.items() if is_extra_credit(name)}
    written = sum(nbgrader_meta(c)["points"] for c in source.cells if c.cell_type == "markdown"
                  and nbgrader_meta(c).get("grade"))
    assert extra, "notebook 07 has an extra-credit exercise with graded tests"
    full = sum(points.values()) - sum(extra.values())

    course = throwaway_course(ASSIGNMENT)
    course.grading.path.mkdir(exist_ok=True)
    gradebook.define_assignment(course, ASSIGNMENT, course.root / GRADEBOOK)
    shutil.copyfile(course.root / GRADEBOOK, course.grading.gradebook)
    results = [
        SubmissionResult(ASSIGNMENT, "keen", Status.GRADED, tests=[CellResult(ASSIGNMENT, n, p, score=p)
                                                                   for n, p in points.items()]),
        SubmissionResult(ASSIGNMENT, "done", Status.GRADED, tests=[CellResult(ASSIGNMENT, n, p, score=0.0 if
                                                                              is_extra_credit(n) else p)
                                                                   for n, p in points.items()]),
    ]
    with Gradebook(gradebook.sqlite_url(course.grading.gradebook)) as gb:
        for result in results:
            gradebook.merge(gb, result)
    for result in results:
        save_result(course, result)

    rows = export_frame(course).set_index("student")
    assert rows.loc["done", "autograded_max"] == full and rows.loc["keen", "autograded_max"] == full
    assert rows.loc["done", "autograded_score"] == full and rows.loc["done", "extra_credit"] == 0
    assert rows.loc["keen", "extra_credit"] == sum(extra.values())
    assert rows.loc["keen", "total"] == full + sum(extra.values())  # above full marks
    assert Canvas(course).points_possible(ASSIGNMENT) == full + written  # full marks: no extra credit in the maximum

    Canvas(course).write_grades(export_frame(course), tmp_path / "canvas.csv")  # the LMS's maximum leaves it out too
    assert f"{full + written:g}" in (tmp_path / "canvas.csv").read_text().splitlines()[1]
