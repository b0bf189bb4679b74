"""The translated student release: the English release with each Markdown cell's text in another language.

    python -m editions release zh     (``make release`` runs it after nbgrader)

Only Markdown text changes, found by cell id, so that one gradebook grades both editions (docs/editions.md, "How it
is made"). Two kinds of Markdown cell keep the English release's text: a written answer, whose ``YOUR ANSWER HERE``
checksum tells nbgrader an answer was left blank (its translation is the model answer, for the reader edition), and
a cell whose translation is missing or stale, where the English is the only correct text (:func:`untranslated`
lists them; ``tests/test_edition_text.py`` fails until there are none). The notebook's metadata records the edition
(``tfcourse.edition``), which the feedback reads; the two cells the release writes into every notebook
(:mod:`tfcourse.hosted`) are written again for the edition.
"""

import copy
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course import settings
from autograder.course.notebooks import EDITION_KEY, is_student_cell
from editions.translations import Translation, english_hash, load
from tfcourse import hosted
from tfcourse.registry import editions


def edition_notebook(language: str, assignment: str, root: Path = settings.REPO_ROOT) -> Path:
    """The student notebook of ``assignment`` in the edition ``language``'s release (English's included)."""
    return settings.release_notebook(assignment, root, editions()[language].release)


def current(translations: dict[str, Translation], cell_id: str, english: str) -> str | None:
    """The translation of a cell whose English is ``english``, or None when missing or stale."""
    entry = translations.get(cell_id)
    return entry.text if entry is not None and entry.english_hash == english_hash(english) else None


def translate(
    release: NotebookNode, source: NotebookNode, translations: dict[str, Translation], language: str, answers=False
) -> NotebookNode:
    """The translated edition of ``release``; ``source`` is its solution notebook, whose English the hashes name.
    The written answers keep the release's text, unless ``answers`` (the reader edition shows the model answers)."""
    english = {cell.id: cell.source for cell in source.cells if cell.cell_type == "markdown"}
    translated = copy.deepcopy(release)
    for cell in translated.cells:
        if cell.cell_type != "markdown" or (is_student_cell(cell) and not answers) or cell.id not in english:
            continue
        text = current(translations, cell.id, english[cell.id])
        if text is not None:
            cell.source = text
    translated.metadata[EDITION_KEY] = {"edition": language}
    return translated


def untranslated(source: NotebookNode, translations: dict[str, Translation]) -> list[str]:
    """Ids of the source's Markdown cells whose translation is missing or stale."""
    return [
        cell.id
        for cell in source.cells
        if cell.cell_type == "markdown" and cell.id != hosted.LINKS_CELL_ID
        and current(translations, cell.id, cell.source) is None
    ]


def translated_release(language: str, assignment: str, root: Path = settings.REPO_ROOT) -> NotebookNode:
    """What ``python -m editions release`` writes for one notebook, from the files as they are now."""
    release = nbformat.read(settings.release_notebook(assignment, root), as_version=4)
    source = nbformat.read(settings.source_notebook(assignment, root), as_version=4)
    translated = translate(release, source, load(language, assignment), language)
    where = edition_notebook(language, assignment, root).relative_to(root).as_posix()
    hosted.stamp(translated, where, hosted.release_version())
    return translated


def serialised(notebook: NotebookNode) -> str:
    """A notebook as nbgrader writes a release (nbformat's JSON, one trailing newline)."""
    return nbformat.writes(notebook) + "\n"


def write_release(language: str, root: Path = settings.REPO_ROOT) -> list[tuple[str, int]]:
    """Write every notebook's translated release; return (assignment, cells left in English) per notebook."""
    written = []
    folder = root / editions()[language].release
    for assignment in settings.assignment_ids(root):
        path = edition_notebook(language, assignment, root)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(serialised(translated_release(language, assignment, root)), encoding="utf-8")
        source = nbformat.read(settings.source_notebook(assignment, root), as_version=4)
        written.append((assignment, len(untranslated(source, load(language, assignment)))))
    for stray in sorted(folder.glob("*/*.ipynb")):
        if stray.parent.name not in settings.assignment_ids(root):
            stray.unlink()
    return written
