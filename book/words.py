"""The reader edition's own words (navigation, labels, the index page), per language.

English is at ``build/book/``, Chinese at ``build/book/zh/``; each page links to the same page in
the other language and to the student notebook of its own (``notebooks/`` or ``notebooks_zh/``).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Words:
    language: str
    folder: str  # the site's subfolder for this language ("" for English)
    release: str  # the student release the pages link to
    course: str
    contents: str
    nav_top: str
    nav_bottom: str
    other_language: str  # the link to the other language's page, in that language
    run_it: str
    student_notebook: str
    run_it_text: str
    shows: str
    fast_mode: str
    reference_answer: str
    visible_tests: str
    model_answer: str
    index_heading: str
    index_text: str
    index_contents: str
    mode_fast: str
    mode_full: str


EN = Words(
    language="en",
    folder="",
    release="notebooks",
    course="Transformers from scratch",
    contents="contents",
    nav_top="Course pages",
    nav_bottom="Course pages (end of page)",
    other_language="中文版",
    run_it="Run it yourself.",
    student_notebook="The student notebook",
    run_it_text="has the exercises left for you to write. In the course repository: <code>make lab</code>, then open",
    shows="This page shows the reference answers",
    fast_mode=", executed in fast mode (small sizes, few training steps)",
    reference_answer="Reference answer",
    visible_tests="Visible tests",
    model_answer="Model answer",
    index_heading="the reader edition",
    index_text=(
        "Every notebook of the course with its reference answers, the model answers to the written "
        "questions and the visible tests, executed in {mode}. Hidden tests are left out.\n"
        "Each page links to the student notebook, with the exercises left for you to write."
    ),
    index_contents="Contents",
    mode_fast="fast mode, as the grader runs them",
    mode_full="full mode",
)

ZH = Words(
    language="zh",
    folder="zh",
    release="notebooks_zh",
    course="从零实现 Transformer",
    contents="目录",
    nav_top="课程页面",
    nav_bottom="课程页面（页尾）",
    other_language="English",
    run_it="自己动手运行。",
    student_notebook="学生版笔记本",
    run_it_text="留有练习等你完成。在课程仓库中：<code>make lab EDITION=zh</code>，然后打开",
    shows="本页展示参考答案",
    fast_mode="，以快速模式运行（小规模、训练步数少）",
    reference_answer="参考答案",
    visible_tests="可见测试",
    model_answer="示范答案",
    index_heading="阅读版",
    index_text=(
        "课程的每个笔记本，附参考答案、书面问题的示范答案和可见测试，以{mode}运行。不含隐藏测试。\n"
        "每页都链接到学生版笔记本，其中的练习留给你完成。"
    ),
    index_contents="目录",
    mode_fast="快速模式（与评分程序相同）",
    mode_full="完整模式",
)

LANGUAGES = {words.language: words for words in (EN, ZH)}


def other(words: Words) -> Words:
    return ZH if words.language == "en" else EN


def link_to_other_language(words: Words, file_name: str) -> str:
    """The same page in the other language, relative to this page."""
    return f"../{file_name}" if words.folder else f"{ZH.folder}/{file_name}"
