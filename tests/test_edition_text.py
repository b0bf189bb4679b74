"""The Chinese edition is kept in step with the English (COURSE_SPEC section 8), one notebook at a time.

Per notebook, each test fails until ``editions/zh/NN_name.yaml`` translates every Markdown cell of
``solutions/NN_name/NN_name.ipynb`` from its current English (``python -m editions status zh``,
``python -m editions todo zh NN_name``). A notebook with no translation file fails every test here.
"""

import pytest

from editions import checks
from editions.glossary import check_cell, gloss_problems, load_exceptions, load_terms, terms_used
from editions.translations import Translation, english_hash, load, markdown_cells, translation_file
from tests.support.editions import LANGUAGE, SAMPLE_ASSIGNMENT, sample


def translations(assignment: str) -> dict[str, Translation]:
    if not translation_file(LANGUAGE, assignment).exists():
        pytest.fail(f"{translation_file(LANGUAGE, assignment)} does not exist: {assignment} has no Chinese text yet")
    return load(LANGUAGE, assignment)


def test_every_markdown_cell_has_a_translation_of_its_current_english(assignment: str):
    problems = checks.stale_or_missing(markdown_cells(assignment), translations(assignment))
    stale = [cell for cell, state in problems.items() if state == "stale"]
    missing = [cell for cell, state in problems.items() if state == "missing"]
    assert not problems, (
        f"{assignment}: {len(stale)} stale {stale[:8]}, {len(missing)} missing {missing[:8]} "
        f"(python -m editions todo zh {assignment})"
    )


def test_no_translation_of_a_cell_the_notebook_no_longer_has(assignment: str):
    assert not checks.orphaned(markdown_cells(assignment), translations(assignment))


def test_translations_keep_formulas_code_links_and_answer_markers(assignment: str):
    mismatches = checks.markup_mismatches(markdown_cells(assignment), translations(assignment))
    report = [f"{cell}: {kind} en {en} / zh {zh}" for cell, d in mismatches.items() for kind, (en, zh) in d.items()]
    assert not report, "\n".join(report)


def test_translations_use_the_glossary_terms(assignment: str, record_property):
    cells, uses, problems = checks.glossary_problems(
        markdown_cells(assignment), translations(assignment), LANGUAGE, assignment
    )
    record_property("glossary", f"{cells} cells, {uses} term uses checked")
    print(f"{assignment}: glossary checked {uses} term uses in {cells} cells")
    assert cells, f"{assignment}: no current translation uses a glossary term: nothing was checked"
    assert not problems, "\n".join(map(str, problems))


def test_the_first_token_and_teacher_forcing_of_the_notebook_are_glossed(assignment: str):
    problems = checks.gloss_problems(markdown_cells(assignment), translations(assignment), LANGUAGE)
    assert not problems, "\n".join(map(str, problems))


# The checkers themselves, on the sample of 01 (so that they are proven before the translations arrive).


def test_the_sample_translation_passes_every_check():
    english, sample_text = markdown_cells(SAMPLE_ASSIGNMENT), sample()
    current = {cell: sample_text[cell] for cell in sample_text}
    assert not {c: s for c, s in checks.stale_or_missing(english, current).items() if c in sample_text}
    assert not checks.markup_mismatches(english, current)
    cells, uses, problems = checks.glossary_problems(english, current, LANGUAGE)
    assert cells >= 3 and uses >= 15 and not problems, problems


def test_a_changed_english_cell_makes_its_translation_stale():
    english, translated = markdown_cells(SAMPLE_ASSIGNMENT), sample()
    cell = next(iter(translated))
    changed = {**english, cell: english[cell] + " One more sentence."}
    assert checks.stale_or_missing(changed, translated)[cell] == "stale"
    assert checks.stale_or_missing(english, {c: t for c, t in translated.items() if c != cell})[cell] == "missing"


@pytest.mark.parametrize(
    ("kind", "damage"),
    [
        ("formulas", lambda text: text.replace("$\\sqrt{d_k}$", "根号 d_k", 1)),
        ("code spans", lambda text: text.replace("`(B, L, D)`", "(B, L, D)", 1)),
        ("links", lambda text: text + "\n见 [文档](https://pytorch.org)。"),
        ("answer markers", lambda text: text + "\n\nYOUR ANSWER HERE"),
        ("hints", lambda text: text + "\n<details><summary>Hint 1</summary>提示</details>"),
        ("headings", lambda text: text.replace("# 01 · ", "01 · ", 1)),
    ],
)
def test_a_lost_or_added_formula_code_span_link_or_marker_is_caught(kind, damage):
    english, translated = markdown_cells(SAMPLE_ASSIGNMENT), sample()
    cell = "89fbad45"  # the title cell: formulas, code spans and a heading
    broken = damage(translated[cell].text)
    assert broken != translated[cell].text, "the damage changed nothing: the test would prove nothing"
    found = checks.markup_mismatches(english, {cell: Translation(english_hash(english[cell]), broken)})
    assert kind in found.get(cell, {}), found


GLOSSARY = """
terms:
  - {en: token, zh: 词元, not: [令牌, 标记（指词元时）]}
  - {en: layer normalisation, zh: 层归一化, not: [层规范化]}
  - {en: attention, zh: 注意力}
  - {en: heatmap, zh: 热力图}
  - {en: dropout, zh: 暂退法（dropout）}
  - {en: mean pooling / max pooling, zh: 平均池化 / 最大池化}
"""


def test_the_glossary_check_catches_a_missing_term_and_a_wrong_variant(tmp_path):
    (tmp_path / "glossary.yaml").write_text(GLOSSARY, encoding="utf-8")
    terms = load_terms(LANGUAGE, tmp_path / "glossary.yaml")
    english = "The layer normalisation of each token, and the attention heatmap."
    good = "每个词元的层归一化，以及注意力热力图。"
    assert check_cell("x", english, good, terms) == (4, [])
    _, problems = check_cell("x", english, "每个令牌的层规范化，以及注意力热力图。", terms)
    assert {(p.term.english, p.wrong) for p in problems} == {
        ("token", None), ("token", "令牌"), ("layer normalisation", None), ("layer normalisation", "层规范化")
    }
    # A variant wrong in one sense only (标记 for a token, right for a marker) is not flagged.
    assert check_cell("x", "Each token.", "每个词元的标记。", terms) == (1, [])
    # Full and short forms of a glossed term; paired entries; a term skipped in a cell.
    assert check_cell("x", "Dropout, then dropout.", "暂退法（dropout），然后暂退法。", terms) == (1, [])
    assert check_cell("x", "Mean pooling beats max pooling.", "平均池化胜过最大池化。", terms) == (2, [])
    assert check_cell("x", "Each token.", "每个字。", terms, skip={"token"}) == (0, [])


def test_the_glossary_reads_prose_only_and_longer_terms_first():
    terms = load_terms(LANGUAGE)
    english = (
        "A `mask` argument; the key-value cache; rotary position embeddings; $key$ at https://x.org/token; "
        "[*Attention Is All You Need*](https://arxiv.org/abs/1706.03762)."
    )
    used = sorted(term.english for term in terms_used(english, terms))
    assert used == ["key-value cache", "rotary position embedding"], used


def notebook_text(assignment: str) -> dict[str, str]:
    """A copy of a notebook's committed translation: cell id -> text, in the notebook's order."""
    committed = load(LANGUAGE, assignment)
    return {cell: committed[cell].text for cell in markdown_cells(assignment) if cell in committed}


def test_the_gloss_check_catches_a_missing_and_a_repeated_gloss():
    terms = load_terms(LANGUAGE)
    assert {(t.english, t.gloss) for t in terms if t.gloss} >= {
        ("token", "词元（token）"),
        ("teacher forcing", "教师强制（teacher forcing）"),
        ("epoch", "轮（epoch）"),
    }
    text = notebook_text("07_language_model")  # uses both: 词元 from its first cell, 教师强制 once, in 8716c872
    assert gloss_problems(text, terms) == []
    first = next(cell for cell, words in text.items() if "词元（token）" in words)
    later = next(cell for cell, words in list(text.items())[1:] if cell != first and "词元" in words)
    for damaged, cell, is_first in [
        ({**text, first: text[first].replace("词元（token）", "词元", 1)}, first, True),  # gloss missing
        ({**text, first: text[first].replace("词元（token）", "词元 (token)", 1)}, first, True),  # not full-width
        ({**text, later: text[later].replace("词元", "词元（token）", 1)}, later, False),  # glossed twice
        ({**text, "8716c872": text["8716c872"].replace("教师强制（teacher forcing）", "教师强制")}, "8716c872", True),
    ]:
        assert [(p.cell_id, p.first) for p in gloss_problems(damaged, terms)] == [(cell, is_first)], damaged[cell]
    # The first 词元 is the one glossed, wherever it stands: a gloss further on does not stand in for it.
    moved = {
        **text,
        first: text[first].replace("词元（token）", "词元", 1),
        later: text[later].replace("词元", "词元（token）", 1),
    }
    assert [(p.cell_id, p.first) for p in gloss_problems(moved, terms)] == [(first, True), (later, False)]


def test_an_epoch_is_glossed_once_per_notebook_not_once_per_cell():
    """06 glossed 轮（epoch） in every cell that used it (twelve times); the gloss is the notebook's first 轮 only."""
    terms = load_terms(LANGUAGE)
    text = notebook_text("06_ag_news_classifier")
    assert gloss_problems(text, terms) == []
    uses = [cell for cell, words in text.items() if "轮" in words]
    first, later = uses[0], uses[-1]
    assert text[first].count("轮（epoch）") == 1 and "轮（epoch）" not in "".join(text[cell] for cell in uses[1:])
    for damaged, cell, is_first in [
        ({**text, first: text[first].replace("轮（epoch）", "轮", 1)}, first, True),  # the first one bare
        ({**text, later: text[later].replace("轮", "轮（epoch）", 1)}, later, False),  # glossed again in a later cell
    ]:
        assert [(p.term.english, p.cell_id, p.first) for p in gloss_problems(damaged, terms)] == [
            ("epoch", cell, is_first)
        ], damaged[cell]


WQ = "请用自己的话作答，每题几句话即可。这些题目由人工评分。"


# Each variant issue 32 found (or a wording it replaced), put back into a copy of a corrected cell.
REMOVED_VARIANTS = [
    ("07_language_model", "b5bde0f3", "评估指标", "评分标准"),  # the English says "score": checked everywhere
    ("07_language_model", "c988ab28", "衡量它的指标", "它的评分标准"),
    ("05_encoder_decoder", "written_teacher_forcing", "序列级指标", "序列级评分标准"),  # "metric"
    ("07_language_model", "8716c872", "解码器堆叠", "解码器栈"),
    ("07_language_model", "a4dcd334", "可学习的位置编码", "可学习的位置嵌入"),
    ("02_multi_head_attention", "3f69cbab", "可学习的位置编码", "可学习的位置嵌入"),
    ("03_positional_encoding", "4616868d", "可学习的位置编码", "可学习的位置嵌入"),
    ("07_language_model", "written_rope_offset", "可学习的绝对位置编码", "可学习的绝对位置嵌入"),
    ("05_encoder_decoder", "50f7e576", WQ, "每题用几句话、以你自己的话作答。这些题目由人工评分。"),
    ("06_ag_news_classifier", "a7a0abde", WQ, "每道题用几句话、用你自己的话回答。这些题由人工评分。"),
    ("07_language_model", "1eea7d84", WQ, "每道题用几句话、以你自己的话回答。这些题目由人工评分。"),
]


@pytest.mark.parametrize(
    ("notebook", "cell", "right", "wrong"),
    REMOVED_VARIANTS,
    ids=[f"{notebook}:{cell}" for notebook, cell, _, _ in REMOVED_VARIANTS],
)
def test_the_glossary_check_catches_each_variant_issue_32_removed(notebook, cell, right, wrong):
    terms, skip = load_terms(LANGUAGE), load_exceptions(LANGUAGE, notebook).get(cell, set())
    english, text = markdown_cells(notebook)[cell], notebook_text(notebook)[cell]
    assert text.count(right) == 1 and check_cell(cell, english, text, terms, skip)[1] == []
    _, problems = check_cell(cell, english, text.replace(right, wrong), terms, skip)
    assert problems, f"{cell}: {wrong} was not caught"
    found = {p.wrong for p in problems} - {None}
    if wrong.endswith("人工评分。"):  # another wording of the written-question instruction: the sentence is missing
        assert [(p.term.chinese, p.wrong) for p in problems] == [(WQ, None)]
    else:  # the variant itself is named (评分标准 in 它的评分标准)
        assert found and all(variant in wrong for variant in found), problems
