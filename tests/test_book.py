"""The reader edition (`make book`): built once per session, in fast mode (`--fast`), into a temporary folder.

`make book` itself builds in full mode, so that the figures show trained models; fast mode is
for speed here.

It must list every notebook in course order, show each notebook's figures, the reference
answers and the visible tests, hold no hidden test, load nothing from another host (maths
is MathML), and link each page to its student notebook.
"""

import re
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest
from bs4 import BeautifulSoup

from autograder.course import settings
from autograder.course.notebooks import HIDDEN_TESTS, is_answer_cell, is_graded_test_cell
from autograder.course.settings import REPO_ROOT
from tests.conftest import ASSIGNMENTS, TIMINGS
from tests.support.harness import reference_figures
from tests.support.notebooks import code_lines, read, solution_code, without_hidden_tests

pytestmark = pytest.mark.slow

BUILDER = REPO_ROOT / "book" / "build.py"
BUILD_TIMEOUT_SECONDS = 1800
NBGRADER_MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN SOLUTION", "END SOLUTION", "YOUR CODE HERE")
# What a page could load from elsewhere: an absolute or protocol-relative URL in src, a
# stylesheet link or a CSS url()/@import. Plain <a href> links (further reading) are fine.
REMOTE_RESOURCE = re.compile(
    r"""<(?:script|img|iframe|source|video|audio|embed)\b[^>]*\bsrc\s*=\s*["']?(?:https?:)?//"""
    r"""|<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?//"""
    r"""|url\(\s*["']?(?:https?:)?//|@import\s+["']?(?:https?:)?//""",
    re.I,
)
MATH_ELEMENT = re.compile(r"<math\b.*?</math>", re.S)


@pytest.fixture(scope="session")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("book") / "site"
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, str(BUILDER), "--output", str(output), "--fast"],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_SECONDS,
        cwd=REPO_ROOT,
    )
    TIMINGS["book: build (fast mode)"] = time.perf_counter() - start
    assert result.returncode == 0, f"book/build.py failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return output


def parsed(book: Path, name: str) -> BeautifulSoup:
    return BeautifulSoup((book / name).read_text(), "html.parser")


def html_pages(book: Path) -> list[Path]:
    pages = sorted(book.glob("*.html"))
    assert pages, "the site has no page"
    return pages


def test_index_lists_every_notebook_in_course_order(book: Path):
    index = parsed(book, "index.html")
    main = index.find("main")
    listed = [a["href"] for a in main.select("ol a[href]")]
    assert listed == [f"{assignment}.html" for assignment in ASSIGNMENTS]
    for assignment in ASSIGNMENTS:
        assert (book / f"{assignment}.html").is_file()


def test_each_page_shows_every_figure_of_its_notebook(book: Path, assignment: str):
    figures = sum(reference_figures(assignment))
    images = parsed(book, f"{assignment}.html").select(".jp-OutputArea-output img")
    embedded = [img for img in images if img.get("src", "").startswith("data:image/png;base64,")]
    assert len(embedded) == len(images), "an image is not embedded in the page"
    assert len(images) >= figures, f"{assignment}: {len(images)} images on the page, the notebook makes {figures}"


def test_pages_show_the_reference_answers_and_the_visible_tests(book: Path, assignment: str):
    text = parsed(book, f"{assignment}.html").get_text()
    source = read(settings.source_notebook(assignment))
    expected = []
    for cell in source.cells:
        if is_answer_cell(cell):
            expected += code_lines(solution_code(cell.source))
        elif is_graded_test_cell(cell):
            expected += code_lines(without_hidden_tests(cell.source))
    missing = [line for line in expected if line not in text]
    assert expected and not missing, f"{assignment}: lines of the answers or visible tests missing: {missing[:5]}"


def hidden_only_lines() -> set[str]:
    """Code lines that appear in hidden tests and nowhere else in any source notebook."""
    hidden, elsewhere = set(), set()
    for assignment in ASSIGNMENTS:
        for cell in read(settings.source_notebook(assignment)).cells:
            hidden.update(line for region in HIDDEN_TESTS.findall(cell.source) for line in code_lines(region))
            elsewhere.update(code_lines(without_hidden_tests(cell.source)))
    return hidden - elsewhere


def test_no_page_holds_hidden_tests_or_nbgrader_markers(book: Path):
    hidden = hidden_only_lines()
    assert hidden, "no hidden-test line to look for: this test would prove nothing"
    for path in html_pages(book):
        text = BeautifulSoup(path.read_text(), "html.parser").get_text()
        leaked = sorted(hidden & set(code_lines(text)))
        assert not leaked, f"{path.name} shows hidden-test lines: {leaked[:5]}"
        markers = [marker for marker in NBGRADER_MARKERS if marker in text]
        assert not markers, f"{path.name} shows nbgrader markers {markers}"


def test_no_page_loads_anything_from_another_host(book: Path):
    for path in html_pages(book):
        html = path.read_text()
        remote = [match.group(0) for match in REMOTE_RESOURCE.finditer(html)]
        assert not remote, f"{path.name} loads from another host: {remote[:3]}"
        assert "mathjax" not in html.lower(), f"{path.name} mentions MathJax (maths should be MathML)"


def test_maths_is_mathml_drawn_by_the_browser(book: Path, assignment: str):
    source = read(settings.source_notebook(assignment))
    has_maths = any(cell.cell_type == "markdown" and "$" in cell.source for cell in source.cells)
    html = (book / f"{assignment}.html").read_text()
    soup = BeautifulSoup(html, "html.parser")
    if has_maths:
        assert soup.find("math"), f"{assignment}: the notebook has maths, the page no <math> element"
    for formula in MATH_ELEMENT.findall(html):
        try:
            ElementTree.fromstring(formula)
        except ElementTree.ParseError as error:
            pytest.fail(f"{assignment}: a formula is not well-formed MathML ({error}): {formula[:300]}")
    for markdown in soup.select(".jp-MarkdownOutput"):
        for element in markdown.select("math, code, pre"):
            element.decompose()
        assert "$" not in markdown.get_text(), f"{assignment}: TeX left unrendered: {markdown.get_text()[:300]!r}"


def test_each_page_links_to_its_student_notebook(book: Path, assignment: str):
    link = parsed(book, f"{assignment}.html").select_one("a.student-notebook")
    expected = f"{settings.RELEASE_DIRECTORY}/{assignment}/{assignment}.ipynb"
    assert link is not None and link["href"] == expected
    assert (book / expected).read_bytes() == settings.release_notebook(assignment).read_bytes()
