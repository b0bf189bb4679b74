"""The message catalogs (tfcourse/messages.py, editions/messages.py) and the Chinese figures' font.

Every sentence the notebooks and tfcourse print or draw has a current, complete Chinese translation
whose ``{fields}`` match the English; the language follows the edition; Chinese figures render every
glyph.
"""

import json
import re
import string
import warnings

import matplotlib as mpl
import pytest

mpl.use("Agg")
import matplotlib.pyplot as plt

from editions.messages import interface_sources, read_catalog, sources, untranslated
from tfcourse import language, messages, style
from tfcourse.messages import tr
from tfcourse.registry import editions

LANGUAGE = "zh"
SOURCES = sources()


def fields(text: str) -> set[tuple[str, str, str]]:
    """The ``str.format`` fields of ``text``: name, format spec and conversion (a changed spec could fail to fill)."""
    return {(name, spec or "", conversion or "") for _, name, spec, conversion in string.Formatter().parse(text)
            if name is not None}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_catalog_is_current_and_complete(name: str) -> None:
    catalog = read_catalog(LANGUAGE, name)
    in_catalog = {message.id for message in catalog if message.id}
    used = set(SOURCES[name])
    assert not used - in_catalog, (
        f"tfcourse/locale/{LANGUAGE}/{name}.po lacks {len(used - in_catalog)} message(s) the code uses, e.g. "
        f"{sorted(used - in_catalog)[:3]}. Run `python -m editions messages {LANGUAGE} {name}` and translate them."
    )
    assert not in_catalog - used, (
        f"tfcourse/locale/{LANGUAGE}/{name}.po holds message(s) no code uses: {sorted(in_catalog - used)[:3]}. "
        f"Run `python -m editions messages {LANGUAGE} {name}`."
    )
    missing = untranslated(catalog)
    assert not missing, f"{name}: {len(missing)} message(s) untranslated or fuzzy, e.g. {missing[:3]}"


@pytest.mark.parametrize(("locale", "name"), sorted(interface_sources()))
def test_the_grader_s_and_the_hub_s_catalogs_are_current_complete_and_keep_the_fields(locale, name: str) -> None:
    catalog, used = read_catalog(LANGUAGE, name, locale), interface_sources()[locale, name]
    in_catalog = {message.id for message in catalog if message.id}
    assert in_catalog == set(used), f"run: python -m editions messages {LANGUAGE}"
    assert not untranslated(catalog), untranslated(catalog)
    assert all(fields(m.string) == fields(m.id) for m in catalog if m.id), [m.id for m in catalog if m.id][:3]


def fields_agree(english: str, translation: str) -> bool:
    """The same ``{fields}``; in a formula (``$...\\sqrt{d_k}$``, never filled in) the braces are LaTeX, not fields."""
    if "$" in english:
        return fields(translation) <= fields(english)
    return fields(translation) == fields(english)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_translations_keep_the_fields(name: str) -> None:
    """A translation has the same ``{fields}`` as its English, specs included, so filling it in can never fail."""
    wrong = [
        (message.id, message.string)
        for message in read_catalog(LANGUAGE, name)
        if message.id and message.string and not fields_agree(message.id, message.string)
    ]
    assert not wrong, f"{name}: these translations' {{fields}} differ from the English: {wrong[:3]}"


def test_a_message_has_one_translation_in_every_catalog() -> None:
    """The catalogs are merged into one lookup: an id in two of them must read the same in both."""
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for name in sorted(SOURCES):
        for message in read_catalog(LANGUAGE, name):
            if message.id and message.string:
                first = seen.setdefault(message.id, (name, message.string))
                if first[1] != message.string:
                    clashes.append(f"{message.id!r}: {first[0]} says {first[1]!r}, {name} says {message.string!r}")
    assert not clashes, "one English message, two translations:\n" + "\n".join(clashes[:10])


def test_chinese_filled_into_a_field_keeps_no_space_between_chinese_characters(monkeypatch) -> None:
    monkeypatch.setenv(language.EDITION_VARIABLE, "zh")
    assert "输出 的" not in tr("{name} should have shape {expected}, got {got}.", name="输出", expected=(2,), got=(3,))
    assert "的形状" in tr("{name} should have shape {expected}, got {got}.", name="输出", expected=(2,), got=(3,))
    assert "causal_mask(4) " in tr("{name} should have shape {expected}, got {got}.", name="causal_mask(4)",
                                   expected=(2,), got=(3,)), "a code name keeps its space"


def test_no_translation_mixes_a_formula_with_chinese() -> None:
    """Matplotlib draws a label holding ``$...$`` wholly with its math fonts, which have no Chinese glyphs
    (boxes, and only a log line to say so): a translation writes its symbols in Unicode (dₖ, QKᵀ, 10⁵) instead."""
    mixed = [
        (name, message.string)
        for name in sorted(SOURCES)
        for message in read_catalog(LANGUAGE, name)
        if message.string and re.search(r"\$[^$]+\$", message.string) and re.search(r"[\u4e00-\u9fff]", message.string)
    ]
    assert not mixed, f"translations mixing $formulas$ and Chinese: {mixed[:3]}"


def test_tr_follows_the_edition(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(language.EDITION_VARIABLE, "zh")
    assert tr("{what}: passed", what="shapes") == messages.catalog("zh")["{what}: passed"].format(what="shapes")
    assert re.search(r"[\u4e00-\u9fff]", tr("{what}: passed", what="x"))
    assert tr("no such message {n}", n=3) == "no such message 3", "an unknown message must come out in English"
    monkeypatch.setenv(language.EDITION_VARIABLE, "en")
    assert tr("{what}: passed", what="shapes") == "shapes: passed"


def test_edition_comes_from_the_setting_then_the_notebook(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    notebook = tmp_path / "01_attention.ipynb"
    notebook.write_text(json.dumps({"cells": [], "metadata": {"tfcourse": {"edition": "zh"}}}))
    monkeypatch.delenv(language.EDITION_VARIABLE, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert language.edition() == "en"
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))
    assert language.edition() == "zh", "a kernel running a Chinese notebook should speak Chinese"
    monkeypatch.setenv(language.EDITION_VARIABLE, "en")
    assert language.edition() == "en", "the setting comes before the notebook"
    monkeypatch.delenv(language.EDITION_VARIABLE)
    notebook.write_text("{not json")
    assert language.edition() == "en", "an unreadable notebook falls back to English"


def draw_chinese_figure() -> list[str]:
    """Draw a figure with Chinese title, labels and legend; the glyph warnings Matplotlib gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0], label=tr("per step"))
        ax.set_title("注意力权重：每个查询关注的键")
        ax.set_xlabel("键的位置 (key)")
        ax.set_ylabel("查询的位置")
        ax.legend()
        fig.canvas.draw()
        plt.close(fig)
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_chinese_figures_have_every_glyph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(language.EDITION_VARIABLE, "zh")
    with mpl.rc_context():
        mpl.rcParams["font.family"] = ["sans-serif"]
        assert draw_chinese_figure(), "without the CJK font Matplotlib should warn of missing glyphs (the control)"
        style.apply_course_style()
        assert mpl.rcParams["font.family"][-1] == editions()["zh"].font
        missing = draw_chinese_figure()
    assert not missing, f"the Chinese edition's figures miss glyphs: {missing[:3]}"


def test_the_figure_check_of_the_chinese_runs_sees_chinese_inside_a_formula_label(monkeypatch) -> None:
    """tests/test_chinese_words.py draws each figure with this check: a box for a Chinese character is caught."""
    from tests.support.inprocess import glyphs_missing_when_drawn

    monkeypatch.setenv(language.EDITION_VARIABLE, "zh")
    with mpl.rc_context():
        style.use_edition_font("zh")
        plt.subplots()[1].set_title("softmax 随 $d_k$ 增大而饱和")
        mixed = glyphs_missing_when_drawn()
        plt.close("all")
        plt.subplots()[1].set_title("softmax 随 dₖ 增大而饱和")
        unicode = glyphs_missing_when_drawn()
        plt.close("all")
    assert mixed, "Chinese inside a $formula$ label is drawn as boxes; the check should say so"
    assert not unicode, f"Unicode symbols with Chinese should draw whole, got {unicode}"


def test_chinese_text_is_padded_by_columns_so_rows_line_up(monkeypatch) -> None:
    monkeypatch.setenv(language.EDITION_VARIABLE, "zh")
    rows = [tr("{name:>10}|", name=name) for name in ("贪心解码", "束宽 4", "greedy")]
    assert {messages.display_width(row) for row in rows} == {11}, rows
    assert tr("模型 {name:>9}", name="贪心解码") == "模型  贪心解码", "padding between Chinese text is kept"
    assert tr("{name:>10}|", name="greedy") == "    greedy|", "Latin text pads as str.format does"
    assert tr("{value:>8.3f}|", value=1.5) == "   1.500|", "numbers keep str.format's own specs"


STUB = "raise NotImplementedError(tfcourse.todo_left())"


@pytest.mark.parametrize("edition_folder", ["notebooks", "notebooks_zh"])
def test_every_stub_of_the_release_names_its_todo(edition_folder: str) -> None:
    """An untouched answer raises an error that says which TODO is open, not a bare NotImplementedError."""
    from autograder.course.notebooks import is_answer_cell
    from autograder.course.settings import REPO_ROOT, assignment_ids
    from testbed.notebooks import read

    for assignment in assignment_ids():
        answers = [c.source for c in read(REPO_ROOT / edition_folder / assignment / f"{assignment}.ipynb").cells
                   if is_answer_cell(c) and c.cell_type == "code"]
        assert answers and all(STUB in source for source in answers), f"{edition_folder}/{assignment}: a stub without"
        assert not any("NotImplementedError()" in source for source in answers), f"{assignment}: a bare stub"


class GroupedQueryAttention:
    def forward(self) -> None:
        raise NotImplementedError(__import__("tfcourse").todo_left())


@pytest.mark.parametrize(("edition", "says"), [("en", "TODO {} is not written yet"), ("zh", "TODO {} 还没有写")])
def test_an_untouched_stub_names_its_function_or_method(monkeypatch, edition: str, says: str) -> None:
    monkeypatch.setenv(language.EDITION_VARIABLE, edition)
    namespace: dict = {"tfcourse": __import__("tfcourse")}
    exec(f"def scaled_dot_product_attention(query, key, value):\n    {STUB}\n", namespace)
    with pytest.raises(NotImplementedError, match=re.escape(says.format("scaled_dot_product_attention"))):
        namespace["scaled_dot_product_attention"](1, 2, 3)
    with pytest.raises(NotImplementedError, match=re.escape(says.format("GroupedQueryAttention.forward"))):
        GroupedQueryAttention().forward()
