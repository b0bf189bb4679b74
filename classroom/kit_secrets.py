"""What a student kit must not hold: the course's hidden tests and reference answers, as runs of lines.

A secret is a run of ``RUN`` consecutive lines (the whole block when it is shorter) of a hidden-test
block or of a reference answer, in every edition: the code answers and the model answers to the written
questions of ``solutions/``, the Chinese model answers of ``editions/zh/``, the hidden tests with their
messages as the grader translates them. Lines compare with their whitespace collapsed. A run the release
notebooks show anyway (a signature, a docstring, a setup line a hidden test repeats) is no secret, nor is
one shorter than ``SHORTEST`` characters. A single line of a longer block does not count on its own: the
helper package shares everyday lines with the answers (``self.dropout = nn.Dropout(dropout)``).

This is the kit builder's guard (:mod:`classroom.student_kit`). It also runs the test suite's finder of the
code answers (:mod:`autograder.course.answer_leaks`, comments ignored and a one-line answer found on its own), so
that the builder refuses every solution ``tests/test_no_answer_leaks.py`` would find; ``tests/test_student_kit.py``
checks the built kit again with the suite's hidden-test and written-answer scans.
"""

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import nbformat

from autograder.course import answer_leaks
from autograder.course.hidden_messages import translate_hidden_tests
from autograder.course.notebooks import HIDDEN_TESTS, grade_id, is_student_cell, reference_answers
from autograder.course.settings import assignment_ids, source_notebook
from autograder.pipeline.commands.feedback import SHORTEST_SECRET
from editions.release import edition_notebook
from editions.translations import load
from tfcourse.registry import editions, translated

RUN = 3
SHORTEST = SHORTEST_SECRET  # characters of a run, its lines joined: ``pass``, ``)`` and ``else:`` are no secret

Run = tuple[str, ...]


class KitLeak(RuntimeError):
    """Raised when a file that would go into the kit holds a hidden test or a reference answer."""


def lines_of(text: str) -> list[str]:
    """The lines of ``text`` with every run of whitespace made one space; blank lines dropped."""
    return [line for line in (" ".join(raw.split()) for raw in text.splitlines()) if line]


def runs(lines: list[str], size: int) -> set[Run]:
    return {tuple(lines[i : i + size]) for i in range(len(lines) - size + 1)}


def block_runs(block: str) -> set[Run]:
    """The runs of ``block`` that make it a secret: of ``RUN`` lines, or the whole block when shorter."""
    lines = lines_of(block)
    return runs(lines, min(RUN, len(lines))) if lines else set()


def secret_blocks(root: Path) -> Iterable[str]:
    """Every hidden-test block and reference answer of the course under ``root``, in every edition."""
    for assignment in assignment_ids(root):
        source = nbformat.read(source_notebook(assignment, root), as_version=4)
        for cell in source.cells:
            for language in editions():
                yield from HIDDEN_TESTS.findall(translate_hidden_tests(cell.source, language))
        yield from reference_answers(source).values()
        written = {grade_id(cell) for cell in source.cells if cell.cell_type == "markdown" and is_student_cell(cell)}
        cell_ids = {cell.id for cell in source.cells if grade_id(cell) in written}
        for language in translated():
            yield from (entry.text for cell_id, entry in load(language, assignment).items() if cell_id in cell_ids)


def release_runs(root: Path) -> set[Run]:
    """Every run of up to ``RUN`` lines of the release notebooks' cells, in every edition: public anyway."""
    paths = [edition_notebook(language, a, root) for language in editions() for a in assignment_ids(root)]
    shown: set[Run] = set()
    for path in paths:
        for cell in nbformat.read(path, as_version=4).cells:
            lines = lines_of(cell.source)
            for size in range(1, RUN + 1):
                shown |= runs(lines, size)
    return shown


def course_secrets(root: Path) -> frozenset[Run]:
    """The secrets of the course under ``root`` (see the module's docstring)."""
    shown = release_runs(root)
    found = {run for block in secret_blocks(root) for run in block_runs(block)}
    return frozenset(run for run in found - shown if len(" ".join(run)) >= SHORTEST)


def readable_text(name: str, data: bytes) -> str:
    """What a file says: a notebook's every string (cells, outputs, metadata), any other file decoded."""
    text = data.decode("utf-8", errors="replace")
    if not name.endswith(".ipynb"):
        return text
    try:
        return "\n".join(strings_in(json.loads(text)))
    except ValueError:
        return text


def strings_in(value: object) -> Iterable[str]:
    """The strings of parsed JSON; a list of strings (a cell's source, an output's text) joined into one."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        yield "".join(value)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)


def leaks(files: Mapping[str, bytes], secrets: frozenset[Run]) -> list[str]:
    """``"<file>: <first secret line>"`` for every file of ``files`` (name -> content) holding a secret."""
    sizes = {len(run) for run in secrets}
    found = []
    for name, data in sorted(files.items()):
        lines = lines_of(readable_text(name, data))
        held = sorted(set().union(*(runs(lines, size) for size in sizes)) & secrets) if sizes else []
        if held:
            found.append(f"{name}: {held[0][0]}")
    return found


def refuse_leaks(files: Mapping[str, bytes], root: Path) -> None:
    """Raise :class:`KitLeak` naming every file of ``files`` that holds a secret of the course under ``root``."""
    texts = [(name, readable_text(name, data)) for name, data in sorted(files.items())]
    found = leaks(files, course_secrets(root)) + answer_leaks.leaks(texts, answer_leaks.course_solutions(root))
    if found:
        raise KitLeak("these files would hand students a hidden test or a reference answer:\n" + "\n".join(found))
