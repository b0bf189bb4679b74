"""The feedback scrubber: lines that quote a hidden test go, honest output stays (no grading needed)."""

from pathlib import Path

import nbformat
import pytest
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograder.course.course import Course
from autograder.pipeline.commands.feedback import HIDDEN_LINE_REMOVED, Secrets, student_view, summary_cell
from autograder.pipeline.feedback_text import page_language, words
from autograder.pipeline.storage.results import Status, SubmissionResult
from autograder.pipeline.storage.results import TestResult as CellResult  # (a Test* name would be collected by pytest)
from tfcourse.language import EDITIONS

SECRET = 'expected = torch.tensor([[0.25, 0.75], [1.0, 0.0]]) # "exact" weights'  # as normalised
PUBLIC_TOO = "check_shape('weights', w, (2, 3, 5))"  # in the hidden block and in the release: no secret
WITHIN_PUBLIC = "assert torch.all(w >= 0)"  # hidden, but the release has it within a longer line: no secret
TEST_SOURCE = f"""{PUBLIC_TOO}
{WITHIN_PUBLIC}, "weights are probabilities"
### BEGIN HIDDEN TESTS
{WITHIN_PUBLIC}
{PUBLIC_TOO}
for   shape   in [(3, 4), (5, 4)]:
    {SECRET}
    pass
    )
    x = f(1)

### END HIDDEN TESTS
"""


def cell(source: str, **nbgrader: object) -> NotebookNode:
    made = new_code_cell(source)
    made.metadata["nbgrader"] = {"grade_id": "t1", **nbgrader}
    return made


def tiny_course(root: Path) -> Course:
    """A course of one notebook whose single test cell has a hidden block."""
    course = Course(root)
    release = f"{PUBLIC_TOO}\n{WITHIN_PUBLIC}, 'weights are probabilities'\n"
    for path, source in ((course.source_notebook("a"), TEST_SOURCE), (course.release_notebook("a"), release)):
        path.parent.mkdir(parents=True)
        nbformat.write(new_notebook(cells=[cell(source, grade=True, points=1)]), path)
    return course


def secrets() -> Secrets:
    return Secrets(frozenset({SECRET, "for shape in [(3, 4), (5, 4)]:"}))


def test_secrets_are_the_long_hidden_lines_the_release_does_not_show(tmp_path: Path) -> None:
    lines = Secrets.of_course(tiny_course(tmp_path)).lines
    assert lines == {SECRET, "for shape in [(3, 4), (5, 4)]:"}  # whitespace normalised; pass, ), x = f(1) too short


def test_no_source_notebook_means_no_feedback(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="feedback needs them"):
        Secrets.of_course(Course(tmp_path))


def test_scrub_replaces_only_the_lines_that_quote_a_hidden_line() -> None:
    printed = f"loss 0.25\n   {SECRET.replace(' ', '   ')}   \nfor shape in [(3, 4), (5, 4)]: done\npass\n)\ndone"
    assert secrets().scrub(printed) == f"loss 0.25\n{HIDDEN_LINE_REMOVED}\n{HIDDEN_LINE_REMOVED}\npass\n)\ndone"


def test_scrub_catches_the_line_inside_the_notebook_json_or_a_repr() -> None:
    raw_json = nbformat.writes(new_notebook(cells=[new_code_cell(f"    {SECRET}\nhonest = 1")]))
    assert '\\"exact\\"' in raw_json  # the quotes are escaped in the file, as a student printing it would see them
    scrubbed = secrets().scrub(raw_json + "\n" + repr([SECRET]))
    assert SECRET not in scrubbed and '\\"exact\\"' not in scrubbed and "exact" not in scrubbed
    assert "honest = 1" in scrubbed and scrubbed.count(HIDDEN_LINE_REMOVED) == 2


def test_every_kind_of_output_is_scrubbed() -> None:
    stream = new_output("stream", name="stdout", text=f"ok\n{SECRET}\n")
    coloured = SECRET.replace("expected", "\x1b[0;32mexpected\x1b[0m").replace("torch", "\x1b[1;34mtorch\x1b[0m")
    error = new_output("error", ename="ValueError", evalue=f"bad\n{SECRET}", traceback=[f"line 1\n{coloured}"])
    html_leak = SECRET.replace('"', "&quot;").replace("[", "<b>[</b>")
    rich = new_output("display_data", data={"text/html": f"<pre>{html_leak}</pre>", "text/plain": "<HTML>"})
    plain = new_output("execute_result", data={"text/plain": SECRET, "image/png": "iVBORw0KGgo="}, execution_count=1)
    for output in (stream, error, rich, plain):
        secrets().scrub_output(output)
    assert stream.text == f"ok\n{HIDDEN_LINE_REMOVED}\n"
    assert (error.evalue, error.traceback) == (f"bad\n{HIDDEN_LINE_REMOVED}", [f"line 1\n{HIDDEN_LINE_REMOVED}"])
    assert rich.data == {"text/plain": HIDDEN_LINE_REMOVED}  # HTML that shows the line once rendered goes whole
    assert plain.data == {"text/plain": HIDDEN_LINE_REMOVED, "image/png": "iVBORw0KGgo="}


def test_student_view_scrubs_answer_cells_and_the_summary() -> None:
    answer = cell("print(open('a.ipynb').read())", solution=True)
    answer.metadata.nbgrader["grade_id"] = "answer"
    answer.outputs = [new_output("stream", name="stdout", text=f"{SECRET}\nmy own line\n")]
    graded = cell(TEST_SOURCE, grade=True, points=1)
    graded.outputs = [new_output("stream", name="stdout", text=f"{SECRET}\n")]
    release = new_notebook(cells=[cell(PUBLIC_TOO, grade=True, points=1)])
    view = student_view(new_notebook(cells=[answer, graded]), release, secrets())
    assert view.cells[0].outputs[0].text == f"{HIDDEN_LINE_REMOVED}\nmy own line\n"
    assert view.cells[1].source == PUBLIC_TOO and view.cells[1].outputs[0].text == f"{HIDDEN_LINE_REMOVED}\n"
    result = SubmissionResult("a", "ann", Status.FLAGGED, reason=f"saw {SECRET}", flags=[f"a: printed {SECRET}"])
    result.tests = [CellResult("a", "t1", 1.0, message=f"ValueError: {SECRET}")]
    summary = summary_cell(result, "a", secrets()).source
    assert "exact" not in summary and summary.count(HIDDEN_LINE_REMOVED) == 3


def test_every_status_has_a_word_in_every_language_of_the_page() -> None:
    for language in EDITIONS:
        say = words(language)
        missing = [status for status in Status if status not in say["statuses"]]
        assert not missing, f"the {language} feedback page has no word for {missing}"
    assert words("zh")["statuses"][Status.CRASHED] != Status.CRASHED and page_language("fr") == "en"
