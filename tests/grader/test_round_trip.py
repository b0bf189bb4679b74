"""A notebook that went through another editor (Colab, Kaggle, VS Code, or one that drops every cell's metadata)
is graded as it was written.

Notebook 01 (the fastest) is answered twice, with the reference answers and with a mutant (the causal mask
inverted), and each answered notebook is passed through each editor of :mod:`tests.support.editors`. The
grader's repair step (``sanitize``) must turn every round-tripped copy back into the cells, grade ids and
order of the copy that never left JupyterLab; then the course's grader grades the worst case of both, the
reference answers as Kaggle saves them, and a hand-in whose student deleted a test cell and pasted a copy of
an answer cell (what VS Code lets a student do without a warning), side by side with the untouched ones: the
same answers get the same grade, and the deletion and the copy are each named in the export's repairs column.
"""

import nbformat
import pytest
from nbformat import NotebookNode

from autograder.course.notebooks import grade_id
from autograder.course.settings import release_notebook
from autograder.pipeline.commands.export import export_frame
from autograder.pipeline.job.sanitize import sanitize_notebook
from autograder.pipeline.storage.results import Status
from testbed.variants.attention import VARIANTS
from tests.grader.notebook_class import filled
from tests.support.course import ThrowawayCourse
from tests.support.editors import EDITORS, kaggle, vscode, worst
from tests.support.grading_pool import grade_on_kept_pool
from tests.support.grading_seed import ONE_THREAD

ASSIGNMENT = "01_attention"
MUTANT = next(v for v in VARIANTS if v.cell == "causal_mask" and v.name == "true_means_blocked")


def release() -> NotebookNode:
    return nbformat.read(release_notebook(ASSIGNMENT), as_version=4)


def reference() -> NotebookNode:
    return filled(ASSIGNMENT)


def mutant() -> NotebookNode:
    answer = next(cell.source for cell in reference().cells if grade_id(cell) == MUTANT.cell)
    return filled(ASSIGNMENT, **{MUTANT.cell: MUTANT.apply(answer)})


def graded_form(notebook: NotebookNode) -> list[tuple[str, str | None, str]]:
    """What grading reads of a repaired notebook: each cell's type, grade id and text, in order."""
    repaired, _ = sanitize_notebook(notebook, release())
    return [(cell.cell_type, grade_id(cell), cell.source) for cell in repaired.cells]


@pytest.mark.parametrize("editor", sorted(EDITORS))
@pytest.mark.parametrize("answers", [reference, mutant], ids=["reference", "mutant"])
def test_a_round_trip_through_an_editor_is_repaired_to_the_notebook_as_written(editor, answers):
    written = answers()
    assert graded_form(EDITORS[editor](written)) == graded_form(written)


def test_answers_found_without_metadata_are_named_in_the_repairs():
    _, repairs = sanitize_notebook(worst(reference()), release())
    assert "restored the stripped nbgrader metadata of cell 'sdpa' (found by the function or class it defines)" \
        in repairs, repairs
    assert "restored the stripped nbgrader metadata of cell 'written_sqrt_dk' (found by the cell above it)" \
        in repairs, repairs
    assert not [line for line in repairs if "deleted cell" in line], repairs


def test_a_renamed_answer_is_found_by_its_place_and_keeps_its_text():
    renamed = worst(reference())
    cell = next(cell for cell in renamed.cells if "def causal_mask(" in cell.source)
    cell.source = cell.source.replace("def causal_mask(", "def my_mask(")
    repaired, repairs = sanitize_notebook(renamed, release())
    # Found by its place (the hint above it), so the student's cell keeps its text; the tests still call
    # causal_mask, which it no longer defines: no points gained, none crashed.
    assert "restored the stripped nbgrader metadata of cell 'causal_mask' (found by the cell above it)" in repairs
    assert sum(grade_id(c) == "causal_mask" for c in repaired.cells) == 1


STUDENTS = {
    "as_written": reference,
    "worst_case": lambda: worst(reference()),
    "kaggle": lambda: kaggle(reference()),
    "mutant": mutant,
    "mutant_worst_case": lambda: worst(mutant()),
    "deleted_and_pasted": lambda: vscode(reference()),
}


@pytest.fixture(scope="module")
def graded(throwaway_course: ThrowawayCourse):
    course = throwaway_course(ASSIGNMENT, name="round-trip", seeded=True)
    for student, build in STUDENTS.items():
        folder = course.grading.submitted(student, ASSIGNMENT)
        folder.mkdir(parents=True)
        nbformat.write(build(), folder / f"{ASSIGNMENT}.ipynb")
    results = {r.student: r for r in grade_on_kept_pool(course, jobs=1, limits=ONE_THREAD, progress=False)}
    return course, results


@pytest.mark.slow
def test_the_same_answers_get_the_same_grade_after_any_round_trip(graded):
    _, results = graded
    assert {r.status for r in results.values()} == {Status.GRADED}, {s: r.reason for s, r in results.items()}
    scores = {student: result.score for student, result in results.items()}
    print(scores)  # the report quotes them
    full = sum(test.max_score for test in results["as_written"].tests)
    assert scores["as_written"] == scores["worst_case"] == scores["kaggle"] == scores["deleted_and_pasted"] == full, \
        scores
    assert scores["mutant"] == scores["mutant_worst_case"] < full, scores


@pytest.mark.slow
def test_a_deleted_and_a_pasted_cell_are_each_named_in_the_export(graded):
    course, _ = graded
    frame = export_frame(course).set_index("student")
    repairs = frame.loc["deleted_and_pasted", "repairs"]
    assert "deleted cell 'sdpa_shapes' restored from the release" in repairs, repairs
    assert "duplicate grade id 'sdpa'" in repairs, repairs
    assert "deleted cell" not in str(frame.loc["as_written", "repairs"])
    assert "(found by the function or class it defines)" in frame.loc["worst_case", "repairs"]
