"""``feedback``: one HTML page per student and notebook, with no hidden test and offline maths.

nbgrader's own feedback shows the autograded notebook, hidden tests included, and loads
MathJax from a CDN. Here each test cell shows the *release* text of the test (what the
student already had), its outcome and its failure message without the traceback (which
would quote hidden lines); formulas are drawn by matplotlib's mathtext as inline SVG, with
the TeX as alt text, and fall back to readable TeX where mathtext cannot draw them.
"""

import base64
import functools
import html
import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import nbformat  # noqa: E402
from matplotlib import mathtext  # noqa: E402
from nbconvert import HTMLExporter  # noqa: E402
from nbformat import NotebookNode  # noqa: E402
from nbformat.v4 import new_markdown_cell, new_notebook  # noqa: E402

from autograder.course import GRADING_DIRECTORY, release_notebook  # noqa: E402
from autograder.notebooks import grade_id, is_graded_test_cell  # noqa: E402
from autograder.results import SubmissionResult, load_results  # noqa: E402

DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$([^$\n]+?)\$")
SCRIPT = re.compile(r"<script[^>]*>.*?</script>", re.S | re.I)


@functools.cache
def formula_html(tex: str, display: bool) -> str:
    """An inline SVG image of ``tex``, or the TeX itself in <code> where mathtext cannot draw it."""
    buffer = io.BytesIO()
    try:
        mathtext.math_to_image(f"${tex.strip()}$", buffer, format="svg", prop=None)
    except Exception:  # noqa: BLE001 (mathtext knows a subset of TeX; the rest stays as text)
        return f"<code class='tex'>{html.escape(tex.strip())}</code>"
    data = base64.b64encode(buffer.getvalue()).decode()
    style = "display:block;margin:0.6em auto" if display else "vertical-align:middle"
    return f"<img alt='{html.escape(tex.strip(), quote=True)}' style='{style}' src='data:image/svg+xml;base64,{data}'>"


def render_maths(markdown: str) -> str:
    markdown = DISPLAY_MATH.sub(lambda m: formula_html(m.group(1), True), markdown)
    return INLINE_MATH.sub(lambda m: formula_html(m.group(1), False), markdown)


def summary_cell(result: SubmissionResult, notebook: str) -> NotebookNode:
    lines = [f"# Feedback: {result.assignment} / {notebook}", "",
             f"**Student:** {result.student} &nbsp; **Status:** {result.status}"]  # fmt: skip
    if result.reason:
        lines.append(f"**Note:** {html.escape(result.reason)}")
    tests = [t for t in result.tests if t.notebook == notebook]
    score, most = sum(t.score for t in tests), sum(t.max_score for t in tests)
    lines += ["", f"**Autograded score:** {score:g} / {most:g} (written answers are graded by hand)", "",
              "| test | points | result | message |", "| --- | --- | --- | --- |"]  # fmt: skip
    for test in tests:
        verdict = "passed" if test.score == test.max_score else "failed"
        message = html.escape(test.message.splitlines()[0] if test.message else "").replace("|", "\\|")
        lines.append(f"| `{test.grade_id}` | {test.score:g} / {test.max_score:g} | {verdict} | {message} |")
    if result.flags:
        lines += ["", "**Checks that need a look by the instructor:**", ""]
        lines += [f"- {html.escape(flag)}" for flag in result.flags]
    return new_markdown_cell("\n".join(lines))


def student_view(autograded: NotebookNode, release: NotebookNode) -> NotebookNode:
    """The autograded notebook with every test cell's text set back to the release's, tracebacks cut."""
    notebook = nbformat.from_dict(autograded)
    released = {grade_id(cell): cell.source for cell in release.cells if grade_id(cell)}
    for cell in notebook.cells:
        if not is_graded_test_cell(cell):
            continue
        cell.source = released.get(grade_id(cell), "# (test not shown)")
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output.traceback = [f"{output.ename}: {output.evalue}"]
    return notebook


def feedback_html(result: SubmissionResult, notebook_name: str, root: Path, grading_directory: str) -> str:
    autograded = root / grading_directory / "autograded" / result.student / result.assignment
    release = nbformat.read(release_notebook(result.assignment, root).parent / f"{notebook_name}.ipynb", 4)
    path = autograded / f"{notebook_name}.ipynb"
    notebook = student_view(nbformat.read(path, 4), release) if path.exists() else new_notebook()
    notebook.cells.insert(0, summary_cell(result, notebook_name))
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = render_maths(cell.source)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    # Drop every script: the CDN MathJax loader and its configuration are of no use offline.
    return SCRIPT.sub("", body)


def write_feedback(
    root: Path, students: list[str] | None = None, grading_directory: str = GRADING_DIRECTORY
) -> list[Path]:
    """Write ``grading/feedback/<student>/<assignment>/<notebook>.html`` for every graded result."""
    written = []
    for result in load_results(root, grading_directory):
        if students and result.student not in students or not result.tests:
            continue
        for notebook in sorted({t.notebook for t in result.tests}):
            target = root / grading_directory / "feedback" / result.student / result.assignment / f"{notebook}.html"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(feedback_html(result, notebook, root, grading_directory))
            written.append(target)
    return written
