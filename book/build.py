"""Build the reader edition: the solution notebooks, executed, as a static HTML site.

    python book/build.py [--output build/book] [--fast] [--only 01_attention ...]

For each notebook of ``solutions/``, in course order: a reader copy (hidden tests, nbgrader's markers and metadata
removed; the reference answers, model answers and visible tests kept and tagged, so the page labels them), executed
with nbclient in a temporary copy of its folder, in full mode unless ``--fast``, then rendered by nbconvert's HTML
exporter through ``book/templates/reader`` with every formula turned into MathML at build time by latex2mathml
(browsers draw MathML themselves: no MathJax, no network). One site per edition, each notebook executed once per
language: docs/reader-edition.md.
"""

import argparse
import copy
import html
import json
import os
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
from jinja2 import pass_context
from latex2mathml.converter import convert as latex_to_mathml
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbformat import NotebookNode

if not __package__:  # run as `python book/build.py`: the repository's own packages (book, editions) first
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.course.course import Course
from autograder.course.notebooks import (
    HIDDEN_TESTS,
    SOLUTION_MARKER,
    is_answer_cell,
    is_graded_test_cell,
    is_student_cell,
)
from book.accessible import accessible_html
from book.alt_text import set_alt_text
from book.words import EN, LANGUAGES, Words, link_to_other_language, other
from editions.release import edition_notebook, translate
from editions.translations import load
from tfcourse import hosted
from tfcourse.language import EDITION_VARIABLE

# Read in the kernel that executes a notebook, before its first cell: figures describe themselves.
KERNEL_STARTUP = "from tfcourse.figure_text import install\n\ninstall()\n"

BOOK_DIR = Path(__file__).resolve().parent
COURSE = Course.default()
DEFAULT_OUTPUT = COURSE.root / "build" / "book"
MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML"
MATHML_TOKEN = re.compile(r"(<(mi|mn|mo|ms|mtext)\b[^>]*>)(.*?)(</\2>)", re.S)  # leaves: text, no elements
CELL_TIMEOUT_SECONDS = 1200  # one cell of a full-mode run may train for a while

# Cell tags of the reader copy; the template's CSS labels the cells that carry them.
TAG_REFERENCE_ANSWER = "reader-reference-answer"
TAG_MODEL_ANSWER = "reader-model-answer"
TAG_VISIBLE_TESTS = "reader-visible-tests"


def mathml(tex: str, display: str) -> str:
    """LaTeX as a MathML element (``display`` "inline" or "block"), with the TeX kept as its alt text.

    HTML puts ``<math>`` in the MathML namespace by itself; without the ``xmlns`` attribute the
    element also survives nbconvert's heading anchors, which re-serialise headings as XML.
    """
    element = latex_to_mathml(tex.strip(), display=display).replace(f' xmlns="{MATHML_NAMESPACE}"', "", 1)
    # latex2mathml copies text-mode content as is: `\texttt{<pad>}` would become a tag.
    element = MATHML_TOKEN.sub(
        lambda m: m.group(1) + m.group(3).replace("<", "&lt;").replace(">", "&gt;") + m.group(4), element
    )
    return element.replace("<math", f'<math alttext="{html.escape(tex.strip())}"', 1)


class MathMLRenderer(IPythonRenderer):
    """nbconvert's Markdown renderer, with formulas drawn as MathML instead of left for MathJax."""

    def inline_math(self, body: str) -> str:
        return mathml(body, "inline")

    def block_math(self, body: str) -> str:
        return mathml(body, "block")

    def latex_environment(self, name: str, body: str) -> str:
        return mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", "block")


class ReaderExporter(HTMLExporter):
    """nbconvert's HTML exporter with the reader template and MathML maths."""

    def __init__(self, **kwargs):
        super().__init__(
            template_name="reader",
            extra_template_basedirs=[str(BOOK_DIR / "templates")],
            exclude_anchor_links=False,
            **kwargs,
        )

    @pass_context
    def markdown2html(self, context, source: str) -> str:
        cell = context.get("cell", {})
        path = context.get("resources", {}).get("metadata", {}).get("path", "")
        renderer = MathMLRenderer(
            escape=False,
            attachments=cell.get("attachments", {}),
            embed_images=self.embed_images,
            path=path,
            anchor_link_text=self.anchor_link_text,
            exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options,
        )
        return MarkdownWithMath(renderer=renderer).render(source)


@dataclass
class Page:
    """One page of the site."""

    assignment: str
    title: str
    summary: str
    language: str = "en"
    figures: int = 0
    seconds: float = 0.0

    @property
    def file_name(self) -> str:
        return f"{self.assignment}.html"

    @property
    def student_notebook(self) -> str:
        """The student notebook's path, in the site (from the page) and in the repository alike."""
        return edition_notebook(self.language, self.assignment, Path()).as_posix()


def reader_copy(source: NotebookNode) -> NotebookNode:
    """The solution notebook as a reader sees it: no hidden tests, no nbgrader markers or metadata."""
    reader = copy.deepcopy(source)
    cells = []
    for cell in reader.cells:
        tag = (
            TAG_REFERENCE_ANSWER
            if is_answer_cell(cell)
            else TAG_VISIBLE_TESTS
            if is_graded_test_cell(cell)
            else TAG_MODEL_ANSWER
            if is_student_cell(cell)
            else None
        )
        text = SOLUTION_MARKER.sub("", HIDDEN_TESTS.sub("", cell.source))
        if "HIDDEN TESTS" in text:
            raise ValueError(f"unbalanced hidden-test markers in a cell:\n{cell.source}")
        cell.source = text.rstrip()
        cell.metadata.pop("nbgrader", None)
        if tag:
            cell.metadata["tags"] = [*cell.metadata.get("tags", []), tag]
        if cell.cell_type == "code":
            if not cell.source.strip():
                continue  # a test cell that held hidden tests only
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    reader.cells = cells
    return reader


def execute(notebook: NotebookNode, folder: Path, language: str = EN.language) -> None:
    """Run ``notebook`` in a temporary copy of ``folder`` (whatever it writes stays out of the repository).

    The kernel speaks ``language`` (``TFCOURSE_EDITION``, :mod:`tfcourse.language`): the course's printouts,
    test messages and figure text in the page's language.

    The sibling notebooks lie beside it as in a student's copy of the course (06's last section
    reads the answers of 01-05 from them): here they hold the reference answers. The kernel reads an
    IPython start-up file of the book's own (``KERNEL_STARTUP``), so that each figure it shows
    carries its description (:mod:`tfcourse.figure_text`).
    """
    with tempfile.TemporaryDirectory(prefix="book-") as work:
        startup = Path(work) / ".ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)
        (startup / "00-figure-text.py").write_text(KERNEL_STARTUP)
        here = Path(work) / folder.name
        shutil.copytree(folder, here, ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
        for sibling in sorted(folder.parent.glob("*/*.ipynb")):
            if sibling.parent != folder:
                (Path(work) / sibling.parent.name).mkdir(exist_ok=True)
                shutil.copy(sibling, Path(work) / sibling.parent.name / sibling.name)
        NotebookClient(
            notebook, timeout=CELL_TIMEOUT_SECONDS, kernel_name="python3", resources={"metadata": {"path": str(here)}}
        ).execute(env=os.environ | {"IPYTHONDIR": str(startup.parents[1]), EDITION_VARIABLE: language})


def build_pages(number: int, pages: dict[str, list[Page]], fast: bool) -> tuple[float, int, dict[str, str]]:
    """Execute the ``number``-th notebook's reader copy once per language; its seconds, figure count and pages."""
    assignment = next(iter(pages.values()))[number].assignment
    source = nbformat.read(COURSE.source_notebook(assignment), as_version=4)
    start = time.perf_counter()
    executed = {}
    for language in pages:
        executed[language] = reader_copy(source)
        try:
            execute(executed[language], COURSE.source_folder(assignment), language)
        except CellExecutionError as error:
            raise RuntimeError(f"{assignment} ({language}): a cell of the reader copy failed\n{error}") from None
    seconds = time.perf_counter() - start
    html_pages = {}
    for language, listed in pages.items():
        words, page = LANGUAGES[language], listed[number]
        page_notebook = translated(executed[language], source, assignment, language)
        set_alt_text(page_notebook, language)
        page_notebook.metadata["title"] = page.title
        before = listed[number - 1] if number > 0 else None
        after = listed[number + 1] if number + 1 < len(listed) else None
        reader = navigation(words, page.file_name, before, after, fast) | {"student_notebook": page.student_notebook}
        html_pages[language] = render(ReaderExporter(language_code=language), page_notebook, assignment, reader)
    return seconds, figure_count(next(iter(executed.values()))), html_pages


def title_and_summary(notebook: NotebookNode) -> tuple[str, str]:
    """The first heading of the notebook and the paragraph after it (the links cell above it has none)."""
    first = next(cell.source for cell in notebook.cells
                 if cell.cell_type == "markdown" and cell.source.lstrip().startswith("#"))
    lines = first.strip().splitlines()
    title = lines[0].lstrip("#").strip()
    paragraph = " ".join(line.strip() for line in "\n".join(lines[1:]).strip().split("\n\n")[0].splitlines())
    return title, paragraph


def figure_count(notebook: NotebookNode) -> int:
    return sum(
        1
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.get("output_type") in ("display_data", "execute_result") and "image/png" in output.get("data", {})
    )


def link(page: Page) -> dict[str, str]:
    return {"title": page.title, "href": page.file_name}


def render(exporter: ReaderExporter, notebook: NotebookNode, name: str, navigation: dict) -> str:
    resources = {"metadata": {"name": name}, "reader": navigation}
    body, _ = exporter.from_notebook_node(notebook, resources=resources)
    return accessible_html(body, exporter.language_code)


def navigation(words: Words, file_name: str, previous: Page | None, following: Page | None, fast: bool) -> dict:
    return {
        "words": words,
        "previous": link(previous) if previous else None,
        "next": link(following) if following else None,
        "other_language": {"href": link_to_other_language(words, file_name), "code": other(words).language},
        "fast": fast,
    }


def translated(reader: NotebookNode, source: NotebookNode, assignment: str, language: str) -> NotebookNode:
    """The reader copy with each Markdown cell's current translation (model answers included)."""
    if language == EN.language:
        return reader
    copied = translate(reader, source, load(language, assignment), language, True)
    where = edition_notebook(language, assignment, Path()).as_posix()
    hosted.stamp(copied, where, hosted.release_version(), edition=language)  # this edition's links and setup cell
    return copied


def index_notebook(pages: list[Page], fast: bool, words: Words = EN) -> NotebookNode:
    """The table of contents, as a one-cell notebook rendered like every other page."""
    entries = "\n".join(
        f"{number}. [{page.title}]({page.file_name}): {page.summary}" for number, page in enumerate(pages, start=1)
    )
    mode = words.mode_fast if fast else words.mode_full
    text = (
        f"# {words.course}: {words.index_heading}\n\n{words.index_text.format(mode=mode)}\n\n"
        f"## {words.index_contents}\n\n{entries}\n"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    notebook.metadata["title"] = f"{words.course}: {words.index_heading}"
    return notebook


def site_folder(output: Path, words: Words) -> Path:
    return output / words.folder if words.folder else output


def build(
    output: Path,
    assignments: list[str],
    fast: bool = False,
    languages: tuple[str, ...] = tuple(LANGUAGES),
    jobs: int = 1,
) -> list[Page]:
    """Write the site to ``output`` (emptied first), one folder per language; return its pages in course order.

    ``jobs`` notebooks are executed and rendered at once (a page's seconds are then a shared machine's).
    """
    os.environ.pop("MPLBACKEND", None)  # the kernels draw figures with the inline backend
    os.environ["TFCOURSE_FAST"] = "1" if fast else "0"
    if output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True)
    sites = {language: LANGUAGES[language] for language in languages}

    releases = [edition_notebook(language, a, COURSE.root) for language in languages for a in assignments]
    missing = [str(path) for path in releases if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"student notebooks missing (make release): {missing}")
    pages = {language: [] for language in languages}
    for assignment in assignments:
        source = nbformat.read(COURSE.source_notebook(assignment), as_version=4)
        for language in languages:
            text = translated(source, source, assignment, language)
            pages[language].append(Page(assignment, *title_and_summary(text), language=language))

    # Each notebook is executed and its pages rendered in a process of its own: both take seconds.
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        built = {a: pool.submit(build_pages, number, pages, fast) for number, a in enumerate(assignments)}
        for number, assignment in enumerate(assignments):
            seconds, figures, html_pages = built[assignment].result()
            for language, words in sites.items():
                page = pages[language][number]
                page.seconds, page.figures = seconds, figures
                folder = site_folder(output, words)
                folder.mkdir(parents=True, exist_ok=True)
                (folder / page.file_name).write_text(html_pages[language])
                student = folder / page.student_notebook
                student.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(edition_notebook(language, assignment, COURSE.root), student)
            print(f"{assignment}: {figures} figures, executed in {seconds:.1f} s, {len(sites)} languages", flush=True)

    exporters = {language: ReaderExporter(language_code=language) for language in languages}
    for language, words in sites.items():
        reader = navigation(words, "index.html", None, None, fast) | {"student_notebook": None}
        index = index_notebook(pages[language], fast, words)
        (site_folder(output, words) / "index.html").write_text(render(exporters[language], index, "index", reader))
        manifest = [
            asdict(page) | {"file_name": page.file_name, "student_notebook": page.student_notebook}
            for page in pages[language]
        ]
        (site_folder(output, words) / "pages.json").write_text(
            json.dumps({"fast": fast, "pages": manifest}, indent=2) + "\n"
        )
    return pages[languages[0]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="site folder (emptied first)")
    parser.add_argument("--fast", action="store_true", help="execute in fast mode (TFCOURSE_FAST=1): quick, untrained "
                        "(default: full mode)")
    parser.add_argument("--only", nargs="+", metavar="ASSIGNMENT", help="these notebooks only")
    parser.add_argument(
        "--languages", nargs="+", choices=sorted(LANGUAGES), default=list(LANGUAGES), help="the editions to build"
    )
    parser.add_argument("--jobs", type=int, default=1, help="notebooks executed at once (default 1)")
    args = parser.parse_args(argv)
    assignments = COURSE.assignments()
    unknown = sorted(set(args.only or []) - set(assignments))
    if unknown:
        parser.error(f"unknown notebooks {unknown}; known: {assignments}")
    if args.only:
        assignments = [a for a in assignments if a in args.only]
    start = time.perf_counter()
    pages = build(args.output, assignments, fast=args.fast, languages=tuple(args.languages), jobs=args.jobs)
    size = sum(f.stat().st_size for f in args.output.rglob("*") if f.is_file())
    print(
        f"reader edition: {len(pages)} pages per language ({', '.join(args.languages)}) "
        f"in {time.perf_counter() - start:.1f} s, {size / 1e6:.1f} MB, "
        f"{args.output / 'index.html'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
