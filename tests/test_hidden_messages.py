"""The hidden tests' messages in Chinese (autograder/course/hidden_messages.py), without a catalog students get.

Each catalog of ``autograder/locale/zh/`` holds exactly the messages of its notebook's hidden tests, all
translated with the same f-string fields; translating a hidden block changes its message literals and
nothing else (same syntax tree once the literals are set aside); the feedback's scrubber knows the
translated lines; and no file students get holds a translation. The grading itself, a Chinese
submission's failed hidden test explained in Chinese, is in tests/test_edition_grading.py.
"""

import ast
import re
from collections import Counter

import nbformat
import pytest

from autograder.course import hidden_messages
from autograder.course.hidden_messages import message_literals, translate_code, translate_hidden_tests
from autograder.course.notebooks import HIDDEN_TESTS, grade_id
from autograder.course.settings import REPO_ROOT, assignment_ids, source_notebook
from autograder.pipeline.commands.feedback import normalise, notebook_lines
from editions.messages import hidden_sources, read_catalog, untranslated
from tfcourse import messages

LANGUAGE = "zh"
SOURCES = hidden_sources()
FIELD = re.compile(r"\{[^{}]*\}")  # an f-string field as written, expression and format spec included
CHINESE = re.compile(r"[\u4e00-\u9fff]")


def catalog(name: str):
    return read_catalog(LANGUAGE, name, hidden_messages.LOCALE)


@pytest.mark.parametrize("name", assignment_ids())
def test_each_hidden_catalog_is_current_and_complete(name: str) -> None:
    in_catalog = {message.id for message in catalog(name) if message.id}
    used = set(SOURCES[name])
    assert used == in_catalog, (
        f"autograder/locale/{LANGUAGE}/{name}.po lacks {sorted(used - in_catalog)[:3]} and holds unused "
        f"{sorted(in_catalog - used)[:3]}. Run `python -m editions messages {LANGUAGE} {name}` and translate."
    )
    missing = untranslated(catalog(name))
    assert not missing, f"{name}: {len(missing)} hidden-test message(s) untranslated or fuzzy, e.g. {missing[:3]}"


@pytest.mark.parametrize("name", assignment_ids())
def test_a_translation_keeps_every_field_as_written(name: str) -> None:
    wrong = [(m.id, m.string) for m in catalog(name)
             if m.id and m.string and Counter(FIELD.findall(m.id)) != Counter(FIELD.findall(m.string))]
    assert not wrong, f"{name}: fields differ from the English: {wrong[:3]}"


def without_strings(code: str) -> str:
    """The syntax tree of ``code`` with every string constant blanked and every f-string reduced to its fields
    (in any order: a translation may move them): what a translation must not change."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            node.values = sorted((v for v in node.values if isinstance(v, ast.FormattedValue)), key=ast.dump)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


@pytest.mark.parametrize("name", assignment_ids())
def test_translated_hidden_tests_differ_only_in_their_messages(name: str) -> None:
    cells = nbformat.read(source_notebook(name), 4).cells
    blocks = [block for cell in cells for block in HIDDEN_TESTS.findall(cell.source)]
    translations = messages.catalog(LANGUAGE, hidden_messages.LOCALE)
    changed = 0
    for block in blocks:
        translated = translate_code(block, translations)
        assert without_strings(translated) == without_strings(block), f"{name}: a translation changed:\n{block}"
        changed += translated != block
    assert changed, f"{name}: no hidden block was translated"


# Notebooks whose hidden tests still hold asserts without a message: strict, so a notebook given its messages
# fails here until it leaves this set.
BARE_ASSERTS_LEFT: set[str] = set()


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason="hidden asserts without a message"))
        if name in BARE_ASSERTS_LEFT
        else name
        for name in assignment_ids()
    ],
)
def test_every_hidden_assert_says_what_failed(name: str) -> None:
    """A hidden assert with no message fails as a bare AssertionError: the student's feedback says nothing."""
    bare = [f"{grade_id(cell)}: {ast.get_source_segment(block, node)}"
            for cell in nbformat.read(source_notebook(name), 4).cells for block in HIDDEN_TESTS.findall(cell.source)
            for node in ast.walk(ast.parse(block)) if isinstance(node, ast.Assert) and node.msg is None]
    assert not bare, f"{name}: {len(bare)} hidden assert(s) without a message, e.g. {bare[:3]}"


def test_the_message_literals_are_those_a_student_reads() -> None:
    code = (
        "x = '数'  # Chinese before a literal: offsets are in bytes\n"
        'check_close(f"hidden output {tuple(x.shape)}", a, b, hint="look " "twice")\n'
        'assert ok, ("too big" if big else f\'too small: {v:.2f}\')\n'
        'raise AssertionError(f"D = {d} should raise ValueError")\n'
        'for label, t in [("last axis strided", 1), ("x", 2)]:\n'
        '    check_equal(name=label, got=t, expected="not a message")\n'
        'torch.einsum("...qd,...kd->...qk", q, k)\n'
    )
    found = [literal.text for literal in message_literals(code)]
    assert found == ["hidden output {tuple(x.shape)}", "too big", "too small: {v:.2f}",
                     "D = {d} should raise ValueError", "last axis strided", "x"], found
    translated = translate_code(code, {"hidden output {tuple(x.shape)}": "隐藏输出 {tuple(x.shape)}",
                                       "too small: {v:.2f}": "太小：{v:.2f}"})
    assert 'check_close(f"隐藏输出 {tuple(x.shape)}", a, b, hint="look " "twice")' in translated
    assert "else f'太小：{v:.2f}')" in translated and "x = '数'" in translated
    assert translate_code("check_close(", {"x": "y"}) == "check_close(", "code that does not parse is left alone"
    broken = 'check_close(f"hidden output {q}", a, b)'
    assert translate_code(broken, {"hidden output {q}": '隐藏 "{q}'}) == broken, "a translation that breaks the code"
    assert translate_code(broken, {"hidden output {q}": "隐藏 {q"}) == broken, "a brace the f-string cannot close"


def test_english_hidden_tests_are_left_as_written() -> None:
    cell = nbformat.read(source_notebook(assignment_ids()[0]), 4).cells
    sources = [c.source for c in cell if HIDDEN_TESTS.search(c.source)]
    assert sources and all(translate_hidden_tests(source, "en") == source for source in sources)
    assert any(CHINESE.search(translate_hidden_tests(source, LANGUAGE)) for source in sources)


def test_the_feedback_scrubber_knows_the_translated_hidden_lines() -> None:
    path = source_notebook(assignment_ids()[0])
    secret = notebook_lines([path], hidden_only=True)
    translated = {normalise(line) for c in nbformat.read(path, 4).cells
                  for block in HIDDEN_TESTS.findall(translate_hidden_tests(c.source, LANGUAGE))
                  for line in block.splitlines() if CHINESE.search(line)}
    assert translated and translated <= secret


def test_no_file_students_get_holds_a_hidden_message_translation() -> None:
    """The translations are kept with the grader: neither tfcourse (its catalogs included) nor a release has one
    (of those long enough to be a test's wording: a loop's label, 填充, is everyday text)."""
    hidden = messages.catalog(LANGUAGE, hidden_messages.LOCALE).values()
    translations = {t for t in hidden if CHINESE.search(t) and len(t) >= 8}
    shipped = [path for folder in ("tfcourse", "notebooks", "notebooks_zh") for path in (REPO_ROOT / folder).rglob("*")
               if path.is_file() and path.suffix in {".py", ".po", ".ipynb"}]
    text = "\n".join(path.read_text(encoding="utf-8") for path in shipped)
    found = sorted(t for t in translations if t in text or t.replace('"', '\\"') in text)
    assert translations and not found, f"hidden-test messages in student files: {found[:3]}"
