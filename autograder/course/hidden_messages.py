"""The hidden tests' messages in the student's language, put in as the grader runs them.

The hidden tests' translations live in ``autograder/locale/<edition>/<assignment>.po``, which students never get
(a catalog in :mod:`tfcourse` would hand them the hidden tests' wording before the deadline), and reach the kernel
inside the hidden tests themselves: when a submission of another edition is graded, each message literal of a
hidden-test block is replaced by its translation, the same expressions in its fields, so the kernel sees nothing the
English hidden tests would not have shown it and the feedback's scrubber treats the translated lines as the English
ones (:meth:`autograder.pipeline.commands.feedback.Secrets.of_course`; docs/editions.md).

A message literal is, in a hidden-test block: the name (first argument, or ``name=``) and
``hint=`` of a check (``check_close``, ...); an ``assert``'s message; the message of an exception
raised by name (``AssertionError(...)``); either branch of a conditional expression in those
places; and a string label among the tuples a ``for`` loop walks (the hidden tests use them only
in their messages: "a {name} input"). ``python -m editions messages`` extracts them with :func:`message_literals`.
"""

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from autograder.course.notebooks import HIDDEN_TESTS, edition, is_graded_test_cell
from tfcourse.language import ENGLISH
from tfcourse.messages import catalog

LOCALE = Path(__file__).resolve().parents[1] / "locale"
CHECKS = {"check_tensor", "check_shape", "check_dtype", "check_finite", "check_equal", "check_close", "check_near"}
CHECK_KEYWORDS = {"name", "hint"}
# A string literal as written: its prefix (no bytes), its quotes, and the text between them.
LITERAL = re.compile(r"(?P<prefix>[rRuUfF]{0,2})(?P<quote>'''|\"\"\"|'|\")(?P<text>.*)(?P=quote)", re.S)


@dataclass(frozen=True)
class Literal:
    """A message literal of a piece of code: where it is (byte offsets in the UTF-8 code) and what it says."""

    start: int
    end: int
    prefix: str
    quote: str
    text: str  # as written between the quotes: escapes and f-string fields unchanged

    def written(self, text: str) -> str:
        return f"{self.prefix}{self.quote}{text}{self.quote}"


def called_name(call: ast.Call) -> str:
    """The name a call calls: ``check_close`` in ``check_close(...)`` and in ``tfcourse.check_close(...)``."""
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")


def _message_nodes(tree: ast.AST) -> Iterator[ast.expr]:
    """The expressions of ``tree`` whose string value is a message (see the module's docstring)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and called_name(node) in CHECKS:
            yield from node.args[:1]
            yield from (keyword.value for keyword in node.keywords if keyword.arg in CHECK_KEYWORDS)
        elif isinstance(node, ast.Call) and called_name(node).endswith(("Error", "Exception")):
            yield from node.args[:1]
        elif isinstance(node, ast.Assert) and node.msg is not None:
            yield node.msg
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.List | ast.Tuple):
            for row in node.iter.elts:
                if isinstance(row, ast.Tuple):
                    yield from (item for item in row.elts if isinstance(item, ast.Constant))


def _branches(node: ast.expr) -> Iterator[ast.expr]:
    if isinstance(node, ast.IfExp):
        yield from _branches(node.body)
        yield from _branches(node.orelse)
    elif isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        yield node


def _one_literal(text: str, quote: str) -> bool:
    """Whether ``text`` lies between one pair of quotes, not two literals side by side (``"a " "b"``, left alone)."""
    unescaped = re.sub(r"\\.", "", text, flags=re.S)
    return (quote if len(quote) == 3 else quote[0]) not in unescaped


def _offset(line_starts: list[int], line: int, column: int) -> int:
    return line_starts[line - 1] + column


def message_literals(code: str) -> list[Literal]:
    """The message literals of ``code`` in the order they are written; none when it is not plain Python."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    data = code.encode()
    line_starts = [0]
    for line in data.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    found: dict[int, Literal] = {}
    for node in (branch for message in _message_nodes(tree) for branch in _branches(message)):
        start = _offset(line_starts, node.lineno, node.col_offset)
        end = _offset(line_starts, node.end_lineno, node.end_col_offset)
        written = LITERAL.fullmatch(data[start:end].decode())
        if written is not None and written["text"].strip() and _one_literal(written["text"], written["quote"]):
            found[start] = Literal(start, end, written["prefix"], written["quote"], written["text"])
    return [found[start] for start in sorted(found)]


def translate_code(code: str, translations: dict[str, str]) -> str:
    """``code`` with each message literal that ``translations`` knows written in its translation.

    Should a translation break the code (a quote or a brace that ends its literal early), the code
    stays in English: a student never loses a point to a translation.
    """
    data = code.encode()
    pieces, done = [], 0
    for literal in message_literals(code):
        if literal.text in translations:
            pieces += [data[done : literal.start], literal.written(translations[literal.text]).encode()]
            done = literal.end
    translated = b"".join([*pieces, data[done:]]).decode()
    try:
        ast.parse(translated)
    except SyntaxError:
        return code
    return translated


def translate_hidden_tests(source: str, language: str) -> str:
    """A cell's ``source`` with the messages of its hidden-test blocks in ``language`` (unchanged in English)."""
    if language == ENGLISH:
        return source
    translations = catalog(language, LOCALE)

    def translated(block: re.Match) -> str:
        whole, start, end = block.group(0), block.start(1) - block.start(), block.end(1) - block.start()
        return whole[:start] + translate_code(block.group(1), translations) + whole[end:]

    return HIDDEN_TESTS.sub(translated, source)


def translate_notebook(notebook: NotebookNode, language: str) -> NotebookNode:
    """``notebook`` (changed in place, and returned) with its test cells' hidden messages in ``language``."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and is_graded_test_cell(cell):
            cell.source = translate_hidden_tests(cell.source, language)
    return notebook


class TranslateHiddenTests(Preprocessor):
    """nbgrader's autograde step that puts the hidden tests' messages in the submission's edition.

    It runs after ``OverwriteCells`` has put the hidden tests back from the gradebook (settings.py
    lists it), under the course grader and under plain ``nbgrader autograde`` alike.
    """

    enabled = Bool(True)  # nbconvert's preprocessors are off unless enabled; nbgrader's steps are on

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        return translate_notebook(nb, edition(nb)), resources
