"""A Chinese student meets no English the course wrote: counted in each Chinese notebook's run, and 0.

The same run draws every figure and fails on a glyph no font has (a Chinese character drawn as a box).

Each Chinese release (``notebooks_zh/``) runs in this process in fast mode in the zh edition
(``TFCOURSE_EDITION=zh``), once with the reference answers and once more per exercise with a wrong answer
(its first mutant in ``tests/variants``). Counted: the English words in what the cells print (standard
output and error), in their figures' titles, axis labels, legends and colour bars, and in the failure
messages of the visible tests (``AssertionError``; an error PyTorch raises in a wrong answer is PyTorch's
English, not the course's).

An English word is the course's when the course wrote it: it appears in a string literal of the English
release's code or in a message of :mod:`tfcourse` (its catalog; its other literals hold AG News examples,
which are data). Code names (every identifier in the notebook's code and in
:mod:`tfcourse`), the glossary's ``keep`` spellings and the English the Chinese prose of the notebook keeps
itself (pow, top-k) are not counted, nor are the few words PyTorch and
tqdm print themselves (``LIBRARY_WORDS``); data (news texts, example sentences) is not the course's prose.
"""

import ast
import io
import re
import tokenize
from functools import cache

import nbformat
import pytest
import yaml

from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.settings import REPO_ROOT, release_notebook, source_notebook
from editions.messages import package_messages
from editions.release import release_notebook as translated_release
from tests.support.inprocess import CellOutcome, InProcessNotebook
from tests.variants import VARIANTS
from tfcourse.agnews import SAMPLE_DIR, read_ag_news
from tfcourse.language import EDITION_VARIABLE

pytestmark = pytest.mark.slow
WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")
# Printed by PyTorch (tensor reprs), Python (None, True) and tqdm's bars (12.3it/s), never by the course's prose;
# and units, which Chinese technical text writes as in English (the Chinese prose says 9 ms and 544 MiB too).
LIBRARY_WORDS = {"tensor", "dtype", "device", "grad_fn", "requires_grad", "nan", "inf", "it", "s", "e"}
UNITS = {"ms", "kib", "mib", "gib", "kb", "mb", "gb", "ln", "log", "exp"}  # with the functions formulas name
# The course's symbols for axes and matrices, written as in the prose: shapes (B, H, L, Dh), QKᵀ.
SYMBOLS = {"dh", "dk", "dv", "lq", "lk", "qk"}
# Text that is not prose: formulas ($QK^\top$), code spans (`make data`), quoted values in a repr
# (tokenize('Stocks rally') gives ['stocks', ...]; 06 classifies headlines it quotes), markup (<br />), file
# and module names (ag_news_classifier.pt, SPACE.com), and PyTorch's own errors, which a notebook prints on purpose
# (01: what float16 says to a fill value of -1e9) or a message quotes.
NOT_PROSE = re.compile(
    r"\$[^$]*\$|`[^`]*`|(?:(?<=[\[(,= ])|^)'[^'\n]*'(?=[\]),:\s]|$)|<[^>]+>|\b[\w/-]+\.[A-Za-z]\w*\b"
    r"|value cannot be converted to type \S+ without overflow"
    r"|Tensor on device \S+ is not on the expected device \S+"
    r"|view size is not compatible with input tensor's size and stride.*"
    # what an answer raised, as a test prints it (d_model=3: ValueError: ...): the student's words, or PyTorch's
    r"|\b(?!Assertion)[A-Z]\w*Error: .*"
)
# A warning a library writes to stderr (DeprecationWarning: ...), one per line.
LIBRARY_WARNING = re.compile(r"^\w*Warning: ")
DATA_FRAGMENT = 40  # characters: a printed line that shares this many with an AG News text shows the data
QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def code_names(code: str) -> set[str]:
    """Every identifier of ``code`` (NAME tokens: variables, attributes, keywords)."""
    names = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.NAME:
                names.update({token.string, *token.string.split("_")})
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return names


def string_words(code: str) -> set[str]:
    """The words of every string literal of ``code`` (f-strings' literal parts included)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    texts = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return {word.lower() for text in texts for word in WORD.findall(text)}


def prose_words(notebook: nbformat.NotebookNode) -> set[str]:
    """The English words the Chinese prose keeps (pow, top-k, 词元（token）), outside code, formulas and links."""
    prose = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    prose = re.sub(r"```.*?```|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\]\([^)]*\)|https?://\S+", " ", prose, flags=re.S)
    return {word.lower() for word in WORD.findall(prose)}


@cache
def package_code() -> str:
    return "\n".join(path.read_text() for path in sorted((REPO_ROOT / "tfcourse").glob("*.py")))


@cache
def kept_spellings() -> set[str]:
    """The glossary's ``keep`` spellings, and the English inside its Chinese terms (top-k 采样, softmax)."""
    glossary = yaml.safe_load((REPO_ROOT / "editions" / "zh" / "glossary.yaml").read_text(encoding="utf-8"))
    spellings = [*glossary.get("keep", []), *(str(term.get("zh", "")) for term in glossary.get("terms", []))]
    return {word.lower() for spelling in spellings for word in WORD.findall(spelling)}


@cache
def news_texts() -> str:
    """Every title and description of the committed AG News sample, whitespace squeezed: the data 06 and 07 show."""
    frames = [read_ag_news(SAMPLE_DIR / name) for name in ("train.csv", "test.csv")]
    return "\n".join(" ".join(text.split()) for frame in frames for text in frame["text"])


def shows_data(line: str) -> bool:
    """Whether ``line`` prints a news text: a stretch of :data:`DATA_FRAGMENT` characters of one, or a quoted
    one whole (``'Owners Reach Deal (Reuters)'（10 个词元）``, where no stretch lies between the quotes)."""
    squeezed = " ".join(line.split())
    step = DATA_FRAGMENT // 2
    quoted = [" ".join((single or double).split()) for single, double in QUOTED.findall(line)]
    return any(len(text) >= DATA_FRAGMENT // 2 and text in news_texts() for text in quoted) or any(
        squeezed[start : start + DATA_FRAGMENT] in news_texts()
        for start in range(0, max(1, len(squeezed) - DATA_FRAGMENT + 1), step)
        if len(squeezed) >= DATA_FRAGMENT
    )


def english_words(texts: list[str], course: set[str], names: set[str]) -> list[str]:
    """The course's English words in ``texts``, one entry per occurrence, each with the line it is on."""
    allowed = {name.lower() for name in names} | kept_spellings() | LIBRARY_WORDS | UNITS | SYMBOLS
    lines = [line for text in texts for line in text.splitlines() if not LIBRARY_WARNING.match(line.strip())]
    return [
        f"{word} (in: {line.strip()[:100]})"
        for line in lines
        for word in WORD.findall(NOT_PROSE.sub(" ", line))
        if word.lower() in course and word.lower() not in allowed and len(word) > 1 and not shows_data(line)
    ]


def printed(outcome: CellOutcome) -> list[str]:
    """What a cell showed the student: its output, its figures' text and a visible test's failure message."""
    failure = [outcome.error] if outcome.error.startswith("AssertionError") else []
    return [outcome.stdout, outcome.stderr, *outcome.figure_text, *failure]


def test_the_chinese_notebook_shows_no_english_the_course_wrote(assignment: str, monkeypatch) -> None:
    english = nbformat.read(release_notebook(assignment), as_version=4)
    code = "\n".join(cell.source for cell in english.cells if cell.cell_type == "code")
    course_words = string_words(code) | {w.lower() for m in package_messages() for w in WORD.findall(m)}
    names = code_names(code) | code_names(package_code())
    source = nbformat.read(source_notebook(assignment), as_version=4)
    answers = reference_answers(source)
    chinese_release = nbformat.read(translated_release("zh", assignment), as_version=4)
    chinese = fill_answers(chinese_release, answers)
    names |= prose_words(chinese_release)

    monkeypatch.setenv(EDITION_VARIABLE, "zh")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # fast mode, as under the grader
    run = InProcessNotebook(chinese, draw_figures=True)
    found = {"reference answers": english_words([t for o in run.reference for t in printed(o)], course_words, names)}
    for cell in answers:
        wrong = next((v for v in VARIANTS.get(assignment, []) if v.cell == cell and v.kind == "mutant"), None)
        if wrong is None:
            continue
        outcomes = run.grade({cell: wrong.apply(answers[cell])}, tests_of=cell)
        found[f"mutant {wrong.name}"] = english_words(
            [t for o in outcomes.values() for t in printed(o)], course_words, names
        )
    missing = [problem for outcome in run.reference for problem in outcome.missing_glyphs]
    assert not missing, f"{assignment}: the Chinese figures miss glyphs (drawn as boxes): {missing[:5]}"
    counts = {case: len(words) for case, words in found.items() if words}
    print(f"{assignment}: English words the course wrote, per run: {counts or 0}")
    assert not counts, f"{assignment}: English the course wrote reaches a Chinese student: " + "; ".join(
        f"{case}: {words[:8]}" for case, words in found.items() if words
    )
