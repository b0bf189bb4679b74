"""The Chinese student release, notebooks_zh/: generated (`make release`), the English code to the character."""

import nbformat

from autograder.course import settings
from autograder.course.notebooks import edition, is_student_cell
from editions import checks
from editions.release import edition_notebook, serialised, translate, translated_release
from testbed.notebooks import read
from tests.support.editions import LANGUAGE, SAMPLE_ASSIGNMENT, translations_with_sample


def test_the_chinese_release_is_what_make_release_writes(assignment: str):
    committed = edition_notebook(LANGUAGE, assignment)
    assert committed.is_file(), f"{committed} is missing: run `make release`"
    fresh = serialised(translated_release(LANGUAGE, assignment))
    assert committed.read_text(encoding="utf-8") == fresh, f"{committed} is out of date: run `make release`"


def test_the_chinese_release_has_the_english_release_code_to_the_character(assignment: str):
    english = read(settings.release_notebook(assignment))
    chinese = read(edition_notebook(LANGUAGE, assignment))
    assert edition(chinese) == LANGUAGE and edition(english) == "en"
    assert not checks.release_differences(english, chinese)


def test_translating_changes_the_prose_only_and_keeps_the_answer_cells_blank():
    english = read(settings.release_notebook(SAMPLE_ASSIGNMENT))
    source = read(settings.source_notebook(SAMPLE_ASSIGNMENT))
    translations = translations_with_sample(SAMPLE_ASSIGNMENT)
    chinese = translate(english, source, translations, LANGUAGE)
    changed = {cell.id for cell, zh in zip(english.cells, chinese.cells, strict=True) if cell.source != zh.source}
    written = {cell.id for cell in english.cells if cell.cell_type == "markdown" and is_student_cell(cell)}
    assert changed == set(translations) - written and written & set(translations), (changed, written)
    assert all(cell.source == "YOUR ANSWER HERE" for cell in chinese.cells if cell.id in written)
    assert not checks.release_differences(english, chinese)
    # A single changed character of code is caught.
    broken = nbformat.from_dict(chinese)
    code = next(cell for cell in broken.cells if cell.cell_type == "code" and cell.source)
    code.source = code.source[:-1] + ("x" if code.source[-1] != "x" else "y")
    assert checks.release_differences(english, broken)
    # So is a checksum.
    broken = nbformat.from_dict(chinese)
    graded = next(cell for cell in broken.cells if cell.metadata.get("nbgrader", {}).get("checksum"))
    graded.metadata.nbgrader.checksum = "0" * 32
    assert checks.release_differences(english, broken)


def test_a_stale_translation_is_left_out_of_the_release():
    english = read(settings.release_notebook(SAMPLE_ASSIGNMENT))
    source = read(settings.source_notebook(SAMPLE_ASSIGNMENT))
    translations = translations_with_sample(SAMPLE_ASSIGNMENT)
    cell = next(iter(translations))
    next(c for c in source.cells if c.id == cell).source += " Changed."
    chinese = translate(english, source, translations, LANGUAGE)
    kept = {c.id: c.source for c in english.cells}
    assert next(c for c in chinese.cells if c.id == cell).source == kept[cell]
