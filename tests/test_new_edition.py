"""A third edition, added to a temporary copy of the repository with the files docs/editions.md lists and a
handful of translations: its release is built, its catalogs are read (the rest falls back to English), and a
notebook of it says its language. The edition is never shipped: only the copy has it."""

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from autograder.course.settings import REPO_ROOT
from editions.translations import english_hash, markdown_cells
from tests.support.repo_copy import make, repo_copy, run
from tfcourse.hosted import RELEASE_CELL_IDS
from tfcourse.registry import CATALOGS, editions

CODE = "xx"
ASSIGNMENT = "01_attention"
TABLE = f"""
[{CODE}]
name = "Edition XX"
release = "notebooks_{CODE}"
book = "{CODE}"
syllabus = "docs/syllabus.{CODE}.md"
join = " "
"""
# (catalog folder, catalog, English, translation): one message each of the helper package, the feedback page, the hub.
MESSAGES = [
    ("tfcourse/locale", "tfcourse", "{what}: passed", "XX {what} ok"),
    ("autograder/pipeline/locale", "feedback", "Autograded score", "XX score"),
    ("classroom/locale", "hub", "Due dates", "XX due dates"),
]
SAYS = """
import os, sys
from autograder.pipeline.feedback_text import words
from classroom.student_view import message
from tfcourse import language
from tfcourse.checks import passed
os.chdir(sys.argv[1])  # the translated notebook's folder: no variable set, the notebook names its edition
print(language.edition(), passed("shapes"), words("xx")["score"], words("xx")["feedback"], message("xx", "title"),
      message("xx", "none"), sep="|")
"""


def write_catalog(path: Path, english: str, translation: str) -> None:
    catalog = Catalog(locale="en", domain=path.stem)  # Babel knows no locale xx; the catalog's texts are what count
    catalog.add(english, translation)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        write_po(file, catalog, omit_header=True)


def test_the_repository_ships_no_third_edition() -> None:
    assert CODE not in editions() and not (REPO_ROOT / f"notebooks_{CODE}").exists()
    assert not any((REPO_ROOT / folder / CODE).exists() for folder in ("editions", *CATALOGS))


@pytest.mark.slow
def test_a_third_edition_is_built_from_the_files_the_guide_lists(tmp_path: Path) -> None:
    copy = repo_copy(tmp_path)
    with (copy / "tfcourse" / "editions.toml").open("a") as file:
        file.write(TABLE)
    first_cell, english = next(iter(markdown_cells(ASSIGNMENT).items()))
    translation = english.replace("· ", "· XX ", 1)  # "# 01 · XX Attention from scratch", and the cell's text
    (copy / "editions" / CODE).mkdir()
    (copy / "editions" / CODE / f"{ASSIGNMENT}.yaml").write_text(
        json.dumps({first_cell: {"en": english_hash(english), "text": translation}})  # JSON is YAML
    )
    for folder, name, message, said in MESSAGES:
        write_catalog(copy / folder / CODE / f"{name}.po", message, said)
    shutil.copy(copy / "docs" / "syllabus.md", copy / "docs" / f"syllabus.{CODE}.md")

    make(copy, "release")
    run(copy, "python", "book/syllabus.py")
    run(copy, "python", "book/syllabus.py", "--check")

    release = nbformat.read(copy / f"notebooks_{CODE}" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    english_release = nbformat.read(copy / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    assert release.metadata["tfcourse"]["edition"] == CODE
    assert next(c.source for c in release.cells if c.id == first_cell) == translation, "the translated cell"

    def rest(notebook: nbformat.NotebookNode) -> list[str]:  # the release writes each edition's own hosted cells
        return [c.source for c in notebook.cells if c.id not in {first_cell, *RELEASE_CELL_IDS}]

    assert rest(release) == rest(english_release), "the rest: English"
    assert f"`{ASSIGNMENT}` XX Attention" in (copy / "docs" / f"syllabus.{CODE}.md").read_text(), "titles"

    said = run(copy, "python", "-c", SAYS, str(copy / f"notebooks_{CODE}" / ASSIGNMENT)).splitlines()[-1]
    assert said.split("|") == [CODE, "XX shapes ok", "XX score", "Feedback", "XX due dates", "no due date"], said
