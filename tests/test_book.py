"""The reader edition (`make book`): built once per session, in fast mode (`--fast`), into a temporary folder.

`make book` itself builds in full mode, so that the figures show trained models; fast mode is
for speed here.

It must list every notebook in course order, show each notebook's figures, the reference
answers and the visible tests, hold no hidden test, load nothing from another host (maths
is MathML), and link each page to its student notebook. It is built in English and in Chinese
(``zh/``): each page links to the same page in the other language and to its own language's
student notebook, every figure has alt text in the page's language, and every page passes
axe-core (npm, `make axe`) in Chromium with no serious or critical violation.
"""

import functools
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree

import pytest
from bs4 import BeautifulSoup

from autograder.course import settings
from autograder.course.notebooks import HIDDEN_TESTS, is_answer_cell, is_graded_test_cell, solution_code
from autograder.course.settings import REPO_ROOT
from editions.release import edition_notebook
from testbed.lab import chromium_executable
from testbed.notebooks import code_lines, read, without_hidden_tests
from tests.browser.axe import AXE_SCRIPT, audit, blocking, summary
from tests.conftest import ASSIGNMENTS, TIMINGS
from tests.support.harness import reference_figures

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
        [sys.executable, str(BUILDER), "--output", str(output), "--fast", "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_SECONDS,
        cwd=REPO_ROOT,
    )
    TIMINGS["book: build (fast mode)"] = time.perf_counter() - start
    assert result.returncode == 0, f"book/build.py failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return output


@functools.cache  # a page is read by several tests: parsed once per worker (read, never changed: no test may)
def parsed(book: Path, name: str) -> BeautifulSoup:
    return BeautifulSoup((book / name).read_text(), "html.parser")


def html_pages(book: Path) -> list[Path]:
    """Every page, in both languages."""
    pages = sorted(book.glob("*.html")) + sorted((book / "zh").glob("*.html"))
    assert len(pages) == 2 * (len(ASSIGNMENTS) + 1), "the site lacks pages"
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
        text = parsed(book, str(path.relative_to(book))).get_text()
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
    soup = parsed(book, f"{assignment}.html")
    if has_maths:
        assert soup.find("math"), f"{assignment}: the notebook has maths, the page no <math> element"
    for formula in MATH_ELEMENT.findall(html):
        try:
            ElementTree.fromstring(formula)
        except ElementTree.ParseError as error:
            pytest.fail(f"{assignment}: a formula is not well-formed MathML ({error}): {formula[:300]}")
    for markdown in soup.select(".jp-MarkdownOutput"):
        prose = "".join(text for text in markdown.strings if not text.find_parent(["math", "code", "pre"]))
        assert "$" not in prose, f"{assignment}: TeX left unrendered: {prose[:300]!r}"


def test_each_page_links_to_its_student_notebook(book: Path, assignment: str):
    link = parsed(book, f"{assignment}.html").select_one("a.student-notebook")
    expected = f"{settings.RELEASE_DIRECTORY}/{assignment}/{assignment}.ipynb"
    assert link is not None and link["href"] == expected
    assert (book / expected).read_bytes() == settings.release_notebook(assignment).read_bytes()


def test_the_chinese_index_lists_every_notebook_and_each_page_links_to_the_other_language(book: Path):
    index = parsed(book, "zh/index.html")
    assert index.html["lang"] == "zh" and parsed(book, "index.html").html["lang"] == "en"
    assert [a["href"] for a in index.find("main").select("ol a[href]")] == [f"{a}.html" for a in ASSIGNMENTS]
    for assignment in ASSIGNMENTS:
        english, chinese = parsed(book, f"{assignment}.html"), parsed(book, f"zh/{assignment}.html")
        assert english.select_one("a.other-language")["href"] == f"zh/{assignment}.html"
        assert chinese.select_one("a.other-language")["href"] == f"../{assignment}.html"


def test_each_chinese_page_links_to_its_chinese_student_notebook(book: Path, assignment: str):
    link = parsed(book, f"zh/{assignment}.html").select_one("a.student-notebook")
    expected = f"notebooks_zh/{assignment}/{assignment}.ipynb"
    assert link is not None and link["href"] == expected
    assert (book / "zh" / expected).read_bytes() == edition_notebook("zh", assignment).read_bytes()


def test_every_figure_has_alt_text_that_says_what_it_shows_in_the_page_language(book: Path, assignment: str):
    for page, opening in ((f"{assignment}.html", "Figure: "), (f"zh/{assignment}.html", "图：")):
        images = parsed(book, page).select(".jp-OutputArea-output img")
        assert images, f"{page} has no figure"
        for img in images:
            alt = img.get("alt", "")
            # The figure's own title, axes and legend, then the prose's sentence about it.
            assert alt.startswith(opening) and len(alt) > len(opening) + 20, f"{page}: alt text {alt!r}"
            assert "No description has been provided" not in alt


def need_the_audit_s_tools() -> None:
    lacking = [
        what
        for what, present in (
            ("Debian's chromium (make browser-test)", chromium_executable()),
            ("axe-core (make axe: npm ci)", AXE_SCRIPT.is_file()),
        )
        if not present
    ]
    if lacking:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(f"missing: {', '.join(lacking)}")


def test_the_audit_runs_in_a_worker_that_holds_a_started_playwright(tmp_path: Path):
    """tests/browser/conftest.py keeps a Playwright started for a worker's session; an audit in that worker after it
    met its running event loop ("using Playwright Sync API inside the asyncio loop", a full run of 2026-11-29)."""
    need_the_audit_s_tools()
    from playwright.sync_api import sync_playwright

    (tmp_path / "index.html").write_text(
        '<!doctype html><html lang="en"><head><title>A page</title></head>'
        "<body><main><h1>A page</h1></main></body></html>"
    )
    held = sync_playwright().start()
    try:
        assert audit([tmp_path]) == {f"{tmp_path.name}/index.html": []}
    finally:
        held.stop()


def test_every_page_passes_axe_core_with_no_serious_or_critical_violation(book: Path):
    need_the_audit_s_tools()
    start = time.perf_counter()
    results = audit([book, book / "zh"])
    TIMINGS["book: axe-core on every page"] = time.perf_counter() - start
    assert len(results) == len(html_pages(book))
    for page, violations in results.items():
        print(page, summary(violations))
    failing = {page: summary(blocking(violations)) for page, violations in results.items() if blocking(violations)}
    assert not failing, failing
