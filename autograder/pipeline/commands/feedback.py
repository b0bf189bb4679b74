"""``feedback``: one HTML page per student and notebook, with no hidden test and offline maths.

nbgrader's own feedback shows the autograded notebook, hidden tests included, and loads
MathJax from a CDN. Here the page speaks the student's edition (English or Chinese, see
:mod:`autograder.pipeline.feedback_text`), each test cell shows the *release* text of the test (what the
student already had), its outcome and its failure message without the traceback (which
would quote hidden lines); formulas are drawn by matplotlib's mathtext as inline SVG, with
the TeX as alt text, and fall back to readable TeX where mathtext cannot draw them.

Student code can still print hidden tests while it is graded (the working folder's notebook
has them put back in; a graded function can print its caller's source), so every output,
failure message and flag is scrubbed of each line that quotes a hidden-test line. A flagged
submission's feedback is held until the instructor releases it (``release_flagged``); the
release is kept in ``grading/feedback_releases.json``, for that graded version only.
"""

import base64
import functools
import html
import io
import json
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import nbformat
from matplotlib import mathtext
from nbconvert import HTMLExporter
from nbformat import NotebookNode
from nbformat.v4 import new_markdown_cell, new_notebook

from autograder.course.course import Course
from autograder.course.hidden_messages import translate_hidden_tests
from autograder.course.notebooks import HIDDEN_TESTS, edition, grade_id, is_graded_test_cell
from autograder.course.paths import SUBMISSION_MARKS
from autograder.course.settings import RELEASE_DIRECTORY, SOURCE_DIRECTORY
from autograder.pipeline.feedback_text import CLEAN_RERUN, ENGLISH_WORDS, page_language, words
from autograder.pipeline.storage.results import Status, SubmissionResult, load_results
from tfcourse.language import EDITIONS, ENGLISH

DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$([^$\n]+?)\$")
SCRIPT = re.compile(r"<script[^>]*>.*?</script>", re.S | re.I)
TAG = re.compile(r"<[^>]*>")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # the colours of a traceback, which split a line into tokens
HIDDEN_LINE_REMOVED = "[hidden test line removed]"
# Hidden-test lines shorter than this (whitespace normalised) are everyday text: `pass`, `)`, `else:`, `try:`.
SHORTEST_SECRET = 12
RELEASES_FILE = "feedback_releases.json"


def normalise(line: str) -> str:
    """``line`` with every run of whitespace made one space, and none at the ends."""
    return " ".join(line.split())


def notebook_lines(paths: Iterable[Path], hidden_only: bool) -> set[str]:
    """The normalised lines of the notebooks' cells, or only those between the hidden-test markers: those in
    English and as the grader runs them for each other edition (their messages translated)."""
    lines = set()
    for path in paths:
        for cell in nbformat.read(path, as_version=4).cells:
            texts = [cell.source]
            if hidden_only:
                texts += [translate_hidden_tests(cell.source, language) for language in EDITIONS if language != ENGLISH]
            blocks = [block for text in texts for block in HIDDEN_TESTS.findall(text)] if hidden_only else texts
            lines.update(normalise(line) for block in blocks for line in block.splitlines())
    return lines


def secret_forms(line: str) -> list[str]:
    """``line`` as printed, and as it reads inside a JSON file (the .ipynb itself) or a Python repr."""
    return [line, json.dumps(line)[1:-1], json.dumps(line, ensure_ascii=False)[1:-1], repr(line)[1:-1]]


@dataclass(frozen=True)
class Secrets:
    """The hidden-test lines of a course that no feedback may show."""

    lines: frozenset[str]

    @classmethod
    def of_course(cls, course: Course) -> "Secrets":
        """Every hidden-test line of every source notebook, except short ones and those the release shows anyway
        (as a line or within one)."""
        sources = sorted((course.root / SOURCE_DIRECTORY).rglob("*.ipynb"))
        if not sources:  # without them nothing could be scrubbed
            raise FileNotFoundError(f"no source notebook under {course.root / SOURCE_DIRECTORY}: feedback needs them")
        hidden = notebook_lines(sources, hidden_only=True)
        releases = sorted((course.root / RELEASE_DIRECTORY).glob("*/*.ipynb"))
        public = "\n".join(notebook_lines(releases, hidden_only=False))
        return cls(frozenset(line for line in hidden if len(line) >= SHORTEST_SECRET and line not in public))

    @functools.cached_property
    def forms(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(form for line in sorted(self.lines) for form in secret_forms(line)))

    def leaks(self, text: str) -> bool:
        """Whether one line of text quotes a hidden-test line (whitespace and terminal colours aside)."""
        line = normalise(ANSI.sub("", text))
        return any(form in line for form in self.forms)

    def scrub(self, text: str) -> str:
        """``text`` with every line that quotes a hidden-test line replaced by a marker."""
        lines = text.splitlines(keepends=True)
        return "".join(
            HIDDEN_LINE_REMOVED + line[len(line.rstrip("\r\n")) :] if self.leaks(line) else line for line in lines
        )

    def leaks_markup(self, markup: str) -> bool:
        """Whether HTML, SVG or Markdown shows a hidden-test line once tags and entities are gone."""
        return any(self.leaks(line) for line in html.unescape(TAG.sub("", markup)).splitlines())

    def scrub_output(self, output: NotebookNode) -> None:
        """Scrub one cell output in place; rich output (HTML, SVG, ...) that leaks is replaced whole."""
        kind = output.get("output_type")
        if kind == "stream":
            output.text = self.scrub(output.text)
        elif kind == "error":
            output.ename, output.evalue = self.scrub(output.ename), self.scrub(output.evalue)
            output.traceback = [self.scrub(line) for line in output.get("traceback", [])]
        elif kind in ("display_data", "execute_result"):
            data = output.get("data", {})
            rich = {mime: value for mime, value in data.items() if mime != "text/plain" and readable_text(mime, value)}
            if any(self.leaks_markup(value) for value in rich.values()):
                output.data = {"text/plain": HIDDEN_LINE_REMOVED}
            elif isinstance(data.get("text/plain"), str):
                data["text/plain"] = self.scrub(data["text/plain"])


def readable_text(mime: str, value: object) -> bool:
    """Output data that can show text: every string but base64 images (PNG, JPEG, ...)."""
    return isinstance(value, str) and (not mime.startswith("image/") or mime == "image/svg+xml")


@functools.cache
def formula_html(tex: str, display: bool) -> str:
    """An inline SVG image of ``tex``, or the TeX itself in <code> where mathtext cannot draw it."""
    buffer = io.BytesIO()
    try:
        mathtext.math_to_image(f"${tex.strip()}$", buffer, format="svg", prop=None)
    except Exception:  # mathtext knows a subset of TeX; the rest stays as text
        return f"<code class='tex'>{html.escape(tex.strip())}</code>"
    data = base64.b64encode(buffer.getvalue()).decode()
    style = "display:block;margin:0.6em auto" if display else "vertical-align:middle"
    return f"<img alt='{html.escape(tex.strip(), quote=True)}' style='{style}' src='data:image/svg+xml;base64,{data}'>"


def render_maths(markdown: str) -> str:
    markdown = DISPLAY_MATH.sub(lambda m: formula_html(m.group(1), True), markdown)
    return INLINE_MATH.sub(lambda m: formula_html(m.group(1), False), markdown)


def summary_cell(result: SubmissionResult, notebook: str, secrets: Secrets, say: dict = ENGLISH_WORDS) -> NotebookNode:
    """The summary at the top of the page, in the words ``say`` of the student's edition."""
    status = say["statuses"][result.status]
    label = say["label"].format
    lines = [f"# {say['feedback']}{say['separator']}{result.assignment} / {notebook}", "",
             f"**{label(say['student'])}** {result.student} &nbsp; **{label(say['status'])}** {status}"]
    if result.reason:
        lines.append(f"**{label(say['note'])}** {html.escape(secrets.scrub(result.reason))}")
    tests = [t for t in result.tests if t.notebook == notebook]
    score, most = sum(t.score for t in tests), sum(t.max_score for t in tests)
    lines += ["", f"**{label(say['score'])}** {score:g} / {most:g} ({say['by_hand']})", "",
              "| " + " | ".join(say["columns"]) + " |", "| --- | --- | --- | --- |"]
    for test in tests:
        verdict = say["passed"] if test.score == test.max_score else say["failed"]
        message = secrets.scrub(test.message.splitlines()[0] if test.message else "")
        message = say["clean_rerun"] + message.removeprefix(CLEAN_RERUN) if message.startswith(CLEAN_RERUN) else message
        message = html.escape(message).replace("|", "\\|")
        lines.append(f"| `{test.grade_id}` | {test.score:g} / {test.max_score:g} | {verdict} | {message} |")
    if result.flags:
        lines += ["", f"**{label(say['checks'])}**", ""]
        lines += [f"- {html.escape(secrets.scrub(flag))}" for flag in result.flags]
    return new_markdown_cell("\n".join(lines))


def student_view(autograded: NotebookNode, release: NotebookNode, secrets: Secrets) -> NotebookNode:
    """The autograded notebook with every test cell's text set back to the release's, tracebacks cut,
    and every output of every cell scrubbed of hidden-test lines."""
    notebook = nbformat.from_dict(autograded)
    released = {grade_id(cell): cell.source for cell in release.cells if grade_id(cell)}
    for cell in notebook.cells:
        if is_graded_test_cell(cell):
            cell.source = released.get(grade_id(cell), "# (test not shown)")
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        for output in cell.get("outputs", []):
            secrets.scrub_output(output)
    return notebook


def feedback_html(result: SubmissionResult, notebook_name: str, course: Course, secrets: Secrets) -> str:
    autograded = course.grading.autograded(result.student, result.assignment)
    release = nbformat.read(course.release_folder(result.assignment) / f"{notebook_name}.ipynb", 4)
    path = autograded / f"{notebook_name}.ipynb"
    notebook = student_view(nbformat.read(path, 4), release, secrets) if path.exists() else new_notebook()
    language = page_language(edition(notebook))
    notebook.metadata["title"] = words(language)["title"].format(notebook=notebook_name)  # the page's <title>
    notebook.cells.insert(0, summary_cell(result, notebook_name, secrets, words(language)))
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = render_maths(cell.source)
    body, _ = HTMLExporter(template_name="lab", language_code=language).from_notebook_node(notebook)
    # Drop every script: the CDN MathJax loader and its configuration are of no use offline.
    return SCRIPT.sub("", body)


def submission_key(result: SubmissionResult) -> str:
    return f"{result.student}/{result.assignment}"


def load_releases(course: Course) -> dict[str, str]:
    """``{"student/assignment": digest}`` of the flagged submissions the instructor released."""
    path = course.grading.file(RELEASES_FILE)
    return json.loads(path.read_text()) if path.exists() else {}


def is_released(result: SubmissionResult, releases: dict[str, str]) -> bool:
    """Released for the graded version it was released for: a changed submission, graded again, is held again."""
    return releases.get(submission_key(result)) == result.digest


def selects(selector: str, result: SubmissionResult) -> bool:
    """Whether ``STUDENT`` or ``STUDENT/ASSIGNMENT`` names ``result``."""
    student, _, assignment = selector.partition("/")
    return result.student == student and assignment in ("", result.assignment)


def release_flagged(course: Course, selectors: Iterable[str] = (), everything: bool = False) -> list[str]:
    """Release the feedback of the flagged submissions ``selectors`` name (or of all); returns those naming none."""
    selectors = list(selectors)
    flagged = [r for r in load_results(course) if r.status == Status.FLAGGED]
    releases = load_releases(course)
    for result in flagged:
        if everything or any(selects(selector, result) for selector in selectors):
            releases[submission_key(result)] = result.digest
    path = course.grading.file(RELEASES_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(releases, indent=1, sort_keys=True))
    return [selector for selector in selectors if not any(selects(selector, r) for r in flagged)]


def feedback_state(result: SubmissionResult, releases: dict[str, str], course: Course) -> str:
    """The export's ``feedback`` column: ``missing`` (nothing to give feedback on), ``held (flagged)``,
    ``released``, ``written`` or ``none``."""
    if result.status == Status.MISSING:
        return "missing"
    if result.status == Status.FLAGGED:
        return "released" if is_released(result, releases) else "held (flagged)"
    return "written" if any(course.grading.feedback(result.student, result.assignment).glob("*.html")) else "none"


@dataclass
class FeedbackRun:
    written: list[Path] = field(default_factory=list)
    held: list[SubmissionResult] = field(default_factory=list)  # flagged and not released


def write_feedback(course: Course, students: list[str] | None = None) -> FeedbackRun:
    """Write ``grading/feedback/<student>/<assignment>/<notebook>.html`` for every graded result not held.

    A missing submission gets no page (a page of failed tests would say it was graded), and a held
    one none either; the earlier pages of both (from before it was flagged, or before its files
    went) are removed, so none goes out.
    """
    secrets, releases, run = Secrets.of_course(course), load_releases(course), FeedbackRun()
    for result in load_results(course):
        if students and result.student not in students:
            continue
        folder = course.grading.feedback(result.student, result.assignment)
        if result.status == Status.MISSING:
            shutil.rmtree(folder, ignore_errors=True)
            continue
        if not result.tests:
            continue
        if result.status == Status.FLAGGED and not is_released(result, releases):
            shutil.rmtree(folder, ignore_errors=True)
            run.held.append(result)
            continue
        for notebook in sorted({t.notebook for t in result.tests}):
            target = folder / f"{notebook}.html"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(feedback_html(result, notebook, course, secrets))
            run.written.append(target)
        keep_submission_marks(course, result, folder)
    return run


def keep_submission_marks(course: Course, result: SubmissionResult, folder: Path) -> None:
    """Copy the submission's ``timestamp.txt`` and ``submission_secret.txt`` beside its feedback.

    nbgrader's generate_feedback does the same: ``nbgrader release_feedback`` names each released
    page by a hash of the submission's secret (which ``nbgrader submit`` wrote, and only the
    student's own cache and the instructor hold), so without them feedback cannot travel back
    through the exchange (a JupyterHub class), and with them no student can name another's page.
    """
    submitted = course.grading.submitted(result.student, result.assignment)
    for name in SUBMISSION_MARKS:
        if (submitted / name).is_file() and folder.is_dir():
            shutil.copyfile(submitted / name, folder / name)
