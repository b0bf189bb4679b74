"""The translation files: one YAML file per notebook and language, keyed by cell id.

Each entry holds ``en``, the hash of the English Markdown it translates (see :func:`english_hash`),
and ``text``, the translation. A translation is *stale* when the English cell's hash no longer
matches, and *missing* when a Markdown cell has no entry.
"""

import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import nbformat
import yaml

from autograder.course.settings import REPO_ROOT, source_notebook
from tfcourse.hosted import LINKS_CELL_ID
from tfcourse.registry import source

EDITIONS = Path(__file__).resolve().parent
HASH_LENGTH = 16


@dataclass(frozen=True)
class Translation:
    english_hash: str
    text: str


def english_hash(source: str) -> str:
    """The first characters of the SHA-256 of a cell's English source, exactly as stored."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def markdown_cells(assignment: str, root: Path = REPO_ROOT) -> dict[str, str]:
    """Cell id -> English source of every Markdown cell of the solution notebook, in order; not the links cell,
    which the release writes for each edition (:mod:`tfcourse.hosted`)."""
    notebook = nbformat.read(source_notebook(assignment, root), as_version=4)
    return {cell.id: cell.source for cell in notebook.cells
            if cell.cell_type == "markdown" and cell.id != LINKS_CELL_ID}


def translation_file(language: str, assignment: str) -> Path:
    return EDITIONS / language / f"{assignment}.yaml"


def load(language: str, assignment: str) -> dict[str, Translation]:
    path = translation_file(language, assignment)
    if not path.exists():
        return {}
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    unquoted = [cell_id for cell_id in entries if not isinstance(cell_id, str)]
    if unquoted:  # YAML reads an id of digits only as a number (an octal one if it starts with 0)
        raise ValueError(f"{path}: quote these cell ids, YAML read them as numbers: {unquoted}")
    return {cell_id: Translation(entry["en"], entry["text"]) for cell_id, entry in entries.items()}


@cache
def interface(language: str) -> dict:
    """The edition's own words outside the notebooks (the reader edition's, its figures' alt text, the syllabus
    pages'): the source edition's ``editions/<code>/interface.yaml``, with what the edition's own translates."""
    english, path = EDITIONS / source() / "interface.yaml", EDITIONS / language / "interface.yaml"
    own = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() and language != source() else {}
    return merged(yaml.safe_load(english.read_text(encoding="utf-8")), own or {})


def merged(english: dict, own: dict) -> dict:
    """``english`` with each word ``own`` gives in its place, table by table."""
    return {key: merged(value, own.get(key, {})) if isinstance(value, dict) else own.get(key, value)
            for key, value in english.items()}


class _BlockText(yaml.SafeDumper):
    """Writes multi-line strings as ``|`` blocks, so a translation reads as Markdown in the file."""


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_BlockText.add_representer(str, _represent_text)


def dump(language: str, assignment: str, translations: dict[str, Translation]) -> Path:
    """Write ``translations`` in the notebook's cell order (cells the notebook lacks go last)."""
    order = list(markdown_cells(assignment))
    ranked = sorted(translations, key=lambda cell_id: order.index(cell_id) if cell_id in order else len(order))
    entries = {
        cell_id: {"en": translations[cell_id].english_hash, "text": translations[cell_id].text} for cell_id in ranked
    }
    path = translation_file(language, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = f"# {language} text of solutions/{assignment}/{assignment}.ipynb's Markdown cells, by cell id.\n"
    header += "# en: the hash of the English source translated (python -m editions status).\n"
    path.write_text(
        header + yaml.dump(entries, Dumper=_BlockText, allow_unicode=True, sort_keys=False, width=1000),
        encoding="utf-8",
    )
    return path
