"""The hostile class: each bad submission is reported, earns nothing it did not deserve, harms no one."""

from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbgrader.api import Gradebook

from autograder.cli import main
from autograder.course.paths import sqlite_url
from autograder.launch.sandbox import bwrap_available
from autograder.pipeline.commands.export import export_frame
from autograder.pipeline.commands.feedback import HIDDEN_LINE_REMOVED, release_flagged, write_feedback
from autograder.pipeline.commands.report import write_report
from autograder.pipeline.storage.results import Status, load_results
from tests.grader.hostile_class import ASSIGNMENT, LIMITS, GradedClass, points_per_test
from tests.grader.leaks import leaks, normalised, secret_lines
from tests.support.grading_pool import grade_on_kept_pool

POINTS = points_per_test()  # grade id -> points of every graded test cell of the hostile class's notebook
FULL = sum(POINTS.values())
SDPA_TESTS = [name for name in POINTS if name.startswith("sdpa_")]
# The causal_mask and padding_mask tests that do not call scaled_dot_product_attention.
MASK_POINTS = (
    sum(p for name, p in POINTS.items() if name.startswith(("causal_mask_", "padding_mask_")))
    - POINTS["padding_mask_broadcast"]
)

pytestmark = pytest.mark.slow

# student -> (status, highest score allowed, lowest score required, text the export's reason/flags/repairs must hold)
EXPECTED = {
    "good": (Status.GRADED, FULL, FULL, ""),
    "blank": (Status.GRADED, 0.0, 0.0, ""),
    "nothing_submitted": (Status.MISSING, 0.0, 0.0, "not submitted"),
    "invalid_json": (Status.UNREADABLE, 0.0, 0.0, "unreadable"),
    "deleted_test": (Status.GRADED, FULL - POINTS["sdpa_values"], 0.0, "deleted cell 'sdpa_values' restored"),
    "edited_test": (Status.GRADED, FULL - POINTS["sdpa_values"], 0.0, "edited test cell 'sdpa_values' restored"),
    "duplicate_ids": (Status.GRADED, FULL, FULL, "duplicate grade id 'causal_mask'"),
    "loop_top_level": (Status.GRADED, FULL, FULL, "(cell time or memory limit)"),
    "memory_hog": (Status.GRADED, MASK_POINTS, MASK_POINTS, ""),
    "allclose_patched": (Status.FLAGGED, MASK_POINTS, MASK_POINTS, "patches torch.allclose"),
    "assert_stripper": (Status.FLAGGED, FULL - 2, 0.0, "input_transformers_cleanup"),
    "reads_hidden": (Status.FLAGGED, MASK_POINTS, MASK_POINTS, "mentions grader files"),
    "prints_hidden": (Status.FLAGGED, FULL, FULL, "reads or writes a file"),  # a right answer that prints secrets
    "writes_outside": (Status.FLAGGED, FULL, FULL, "reads or writes a file"),
    "writes_from_function": (Status.FLAGGED, FULL, FULL, "reads or writes a file"),
    # the kernel dies in a cell after the last answer: the clean re-run scores every test
    "os_exit": (Status.CRASHED, FULL, FULL, "DeadKernelError"),
    # the notebook nbgrader runs is not in the kernel's folder: there is nothing to swap for a link
    "links_notebook_elsewhere": (Status.FLAGGED, FULL, FULL, "calls os.remove"),
    "huge_output": (Status.GRADED, FULL, FULL, ""),
}
NEEDS_SANDBOX = {"reads_hidden", "writes_outside", "writes_from_function", "links_notebook_elsewhere"}


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_each_submission_is_reported_and_scored_fairly(graded_class: GradedClass, student: str) -> None:
    if student in NEEDS_SANDBOX and not bwrap_available():
        pytest.skip("needs bubblewrap (apt-get install bubblewrap) to hide the course from student code")
    status, most, least, text = EXPECTED[student]
    result = graded_class.results[student]
    row = export_frame(graded_class.course).set_index("student").loc[student]
    assert row["status"] == str(status), f"{student}: {row['status']} ({row['reason']}; {row['flags']})"
    assert least <= row["autograded_score"] <= most, f"{student}: {row['autograded_score']} points; {result.tests}"
    assert text in f"{row['reason']} {row['flags']} {row['repairs']}", f"{student}: {row.to_dict()}"
    if status != Status.GRADED:
        assert row["reason"], f"{student} has status {status} and no reason"


def test_a_dead_kernel_costs_nothing_the_clean_rerun_can_score(graded_class: GradedClass) -> None:
    result = graded_class.results["os_exit"]
    assert "tests scored by the clean re-run" in result.reason, result
    assert all(t.clean_passed for t in result.tests), result.tests


def test_patched_checks_pass_in_the_kernel_but_not_in_the_clean_rerun(graded_class: GradedClass) -> None:
    result = graded_class.results["allclose_patched"]
    kernel = sum(t.kernel_score for t in result.tests if t.grade_id in SDPA_TESTS)
    assert kernel > 0, "the patch should fool the kernel run, or this test proves nothing"
    assert all(t.score == 0 and t.clean_passed is False for t in result.tests if t.grade_id in SDPA_TESTS)
    assert any("failed in the clean re-run" in flag for flag in result.flags)


def test_assert_stripping_transformer_gains_nothing(graded_class: GradedClass) -> None:
    result = graded_class.results["assert_stripper"]
    causal = [t for t in result.tests if t.grade_id.startswith("causal_mask")]
    assert sum(t.score for t in causal if t.grade_id != "causal_mask_device") == 0, causal


def test_other_students_grades_survive_in_the_real_gradebook(graded_class: GradedClass) -> None:
    if not bwrap_available():
        pytest.skip("without bubblewrap a kernel can overwrite the real gradebook")
    with Gradebook(sqlite_url(graded_class.course.grading.gradebook)) as gb:
        good = gb.find_submission(ASSIGNMENT, "good")
        assert good.code_score == FULL
        assert len(gb.find_assignment(ASSIGNMENT).notebooks) == 1
        graded = {s.student.id for s in gb.assignment_submissions(ASSIGNMENT)}
    assert {"good", "blank", "os_exit", "invalid_json"} <= graded


def test_nobody_wrote_into_other_folders(graded_class: GradedClass) -> None:
    if not bwrap_available():
        pytest.skip("without bubblewrap a kernel can write anywhere the grader can")
    submitted = graded_class.course.grading.submitted("good", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    assert submitted.read_bytes() == graded_class.good_submission_bytes
    solution = graded_class.course.source_notebook(ASSIGNMENT)
    assert solution.read_bytes() == graded_class.solution_bytes


def test_huge_output_is_capped_in_the_kept_copy(graded_class: GradedClass) -> None:
    kept = graded_class.course.grading.autograded("huge_output", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    assert kept.exists()
    assert kept.stat().st_size < 2_000_000, kept.stat().st_size


def test_every_submission_has_a_row(graded_class: GradedClass) -> None:
    frame = export_frame(graded_class.course)
    assert set(frame["student"]) == set(EXPECTED)
    assert frame["status"].notna().all()


def test_feedback_hides_hidden_tests_and_needs_no_cdn(graded_class: GradedClass) -> None:
    release_flagged(graded_class.course, ["allclose_patched"])  # flagged: held until released
    [page] = write_feedback(graded_class.course, ["allclose_patched"]).written
    text = page.read_text()
    source = graded_class.course.source_notebook(ASSIGNMENT).read_text()
    assert "def _reference(query, key, value)" in source  # a hidden helper of sdpa_values ...
    assert "_reference" not in text and "HIDDEN TESTS" not in text  # ... never shown to the student
    assert "<script" not in text.lower(), "no MathJax loader (nor any script) in the offline page"
    assert "data:image/svg+xml;base64," in text, "formulas are drawn inline"
    assert "sdpa_values" in text and "failed" in text and "clean re-run" in text


def test_no_feedback_page_shows_a_hidden_test_line(graded_class: GradedClass) -> None:
    course, secrets = graded_class.course, secret_lines(graded_class.course)
    kept = nbformat.read(course.grading.autograded("prints_hidden", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb", 4)
    answer = next(cell for cell in kept.cells if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "sdpa")
    printed = [line for output in answer.outputs for line in normalised(output.get("text", ""))]
    assert any(secret in line for line in printed for secret in secrets), "the answer cell printed no hidden test"

    assert main(["--root", str(course.root), "feedback", "--release-all-flagged"]) == 0
    pages = sorted(course.grading.feedback().rglob("*.html"))
    # a page for every hand-in with test results, none for a notebook never handed in ("nothing_submitted")
    students = {page.parent.parent.name for page in pages}
    assert students == {r.student for r in load_results(course) if r.tests and r.status != Status.MISSING}
    assert "nothing_submitted" not in students and "good" in students
    shown = leaks(pages, secrets)
    assert not shown, shown[:10]
    scrubbed = course.grading.feedback("prints_hidden", ASSIGNMENT) / f"{ASSIGNMENT}.html"
    assert HIDDEN_LINE_REMOVED in scrubbed.read_text()
    assert export_frame(course).set_index("student").loc["prints_hidden", "feedback"] == "released"


def test_report_and_cli_export(graded_class: GradedClass, tmp_path: Path) -> None:
    page = write_report(graded_class.course, tmp_path / "report.html")
    assert page.read_text().count("data:image/png;base64,") == 2
    assert main(["--root", str(graded_class.course.root), "export", "--output", str(tmp_path / "grades.csv")]) == 0
    frame = pd.read_csv(tmp_path / "grades.csv")
    assert frame.set_index("student").loc["invalid_json", "status"] == "unreadable"
    assert frame.set_index("student").loc["good", f"{ASSIGNMENT} total"] == FULL


def test_grading_again_skips_unchanged_and_redoes_changed(graded_class: GradedClass) -> None:
    assert grade_on_kept_pool(graded_class.course, jobs=2, limits=LIMITS, progress=False) == []
    changed = graded_class.course.grading.submitted("edited_test", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(changed, as_version=4)
    notebook.cells.append(nbformat.v4.new_markdown_cell("late edit"))
    del notebook.cells[-1]["id"]
    nbformat.write(notebook, changed)
    [again] = grade_on_kept_pool(graded_class.course, jobs=2, limits=LIMITS, progress=False)
    assert again.student == "edited_test" and again.score == graded_class.results["edited_test"].score
