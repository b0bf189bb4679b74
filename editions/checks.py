"""Is an edition in step with the English? One function per rule, each returning what breaks it.

- :func:`stale_or_missing`: a Markdown cell with no translation, or one made from older English;
- :func:`orphaned`: a translation of a cell the notebook no longer has;
- :func:`markup_mismatches`: a current translation with more or fewer formulas, code spans, code
  blocks, links, ``YOUR ANSWER HERE`` markers, hints or headings than its English;
- :func:`release_differences`: the translated release differs from the English one outside the
  text of its translated Markdown cells (code, tests, ids, nbgrader metadata and checksums);
- :func:`glossary_problems`: terms translated otherwise than the glossary says;
- :func:`gloss_problems`: a notebook whose first 词元 (教师强制, any term with a ``gloss``) is not glossed.
"""

import copy

from nbformat import NotebookNode

from autograder.course.notebooks import is_student_cell
from editions.glossary import GlossProblem, Problem, check_cell, load_exceptions, load_terms
from editions.glossary import gloss_problems as first_use_glosses
from editions.markup import differences
from editions.release import EDITION_KEY, serialised
from editions.translations import Translation, english_hash
from tfcourse.hosted import edition_neutral


def stale_or_missing(english: dict[str, str], translations: dict[str, Translation]) -> dict[str, str]:
    """Cell id -> ``missing`` or ``stale`` (the English changed since the translation was made)."""
    problems = {}
    for cell_id, text in english.items():
        entry = translations.get(cell_id)
        if entry is None or not entry.text.strip():
            problems[cell_id] = "missing"
        elif entry.english_hash != english_hash(text):
            problems[cell_id] = "stale"
    return problems


def orphaned(english: dict[str, str], translations: dict[str, Translation]) -> list[str]:
    return [cell_id for cell_id in translations if cell_id not in english]


def current_pairs(english: dict[str, str], translations: dict[str, Translation]) -> dict[str, tuple[str, str]]:
    """Cell id -> (English, translation) for every translation made from the current English."""
    return {
        cell_id: (text, translations[cell_id].text)
        for cell_id, text in english.items()
        if cell_id in translations and translations[cell_id].english_hash == english_hash(text)
    }


def markup_mismatches(english: dict[str, str], translations: dict[str, Translation]) -> dict[str, dict]:
    """Cell id -> {kind: (English count, translated count)} for each current translation that differs."""
    found = {}
    for cell_id, (text, translated) in current_pairs(english, translations).items():
        diff = differences(text, translated)
        if diff:
            found[cell_id] = diff
    return found


def _code_only(notebook: NotebookNode) -> str:
    """The notebook serialised with every translatable Markdown text blanked and the edition mark removed."""
    blank = copy.deepcopy(notebook)
    blank.metadata.pop(EDITION_KEY, None)
    for cell in blank.cells:
        if cell.cell_type == "markdown" and not is_student_cell(cell):
            cell.source = ""
        elif cell.cell_type == "code":
            cell.source = edition_neutral(cell.source)
    return serialised(blank)


def release_differences(english: NotebookNode, translated: NotebookNode) -> list[str]:
    """Where the translated release differs from the English one, other than in the translated prose."""
    if len(english.cells) != len(translated.cells):
        return [f"{len(translated.cells)} cells, the English release has {len(english.cells)}"]
    found = []
    for number, (en, zh) in enumerate(zip(english.cells, translated.cells, strict=True)):
        where = f"cell {number} ({en.get('id')})"
        if en.cell_type != zh.cell_type or en.get("id") != zh.get("id") or en.metadata != zh.metadata:
            found.append(f"{where}: type, id or metadata differ")
        elif (en.cell_type != "markdown" or is_student_cell(en)) and edition_neutral(en.source) != edition_neutral(
            zh.source
        ):
            found.append(f"{where}: the {en.cell_type} differs")
        elif en.get("outputs") != zh.get("outputs") or en.get("execution_count") != zh.get("execution_count"):
            found.append(f"{where}: outputs differ")
    if not found and _code_only(english) != _code_only(translated):  # anything else, to the character
        found.append("the notebooks differ outside their cells (notebook metadata, format)")
    return found


def glossary_problems(
    english: dict[str, str], translations: dict[str, Translation], language: str, assignment: str = ""
) -> tuple[int, int, list[Problem]]:
    """(cells checked, term uses checked, problems) over the current translations of one notebook."""
    terms, cells, uses, problems = load_terms(language), 0, 0, []
    exceptions = load_exceptions(language, assignment)
    for cell_id, (text, translated) in current_pairs(english, translations).items():
        used, found = check_cell(cell_id, text, translated, terms, exceptions.get(cell_id, set()))
        cells += bool(used)
        uses += used
        problems += found
    return cells, uses, problems


def gloss_problems(
    english: dict[str, str], translations: dict[str, Translation], language: str
) -> list[GlossProblem]:
    """The glossed terms (词元（token）, 教师强制（teacher forcing）) whose first use in the notebook's current
    translations, in cell order, lacks the gloss, or whose gloss comes again later."""
    cells = {cell_id: translated for cell_id, (_, translated) in current_pairs(english, translations).items()}
    return first_use_glosses(cells, load_terms(language))
