"""A Chinese student meets no English the course wrote: counted in each Chinese notebook's run, and 0.

The same run draws every figure and fails on a glyph no font has (a Chinese character drawn as a box).

Each Chinese release (``notebooks_zh/``) runs in this process in fast mode as ``jupyter nbconvert --execute``
runs it: from the notebook's own folder, with neither ``TFCOURSE_EDITION`` nor ``JPY_SESSION_NAME`` set, so the
language comes from the notebook's own mark (:mod:`tfcourse.language`); once with the reference answers and once
more per exercise with a wrong answer (its first mutant in ``testbed/variants``). Counted: the English words in
what the cells print (standard output and error), in what they display (a cell's last value as the notebook
shows it: a DataFrame's HTML table, headers and index included, else the value's repr), in their figures'
titles, axis labels, legends and colour bars, in the failure messages of the visible tests (``AssertionError``;
an error PyTorch raises in a wrong answer is PyTorch's English, not the course's), and in the notebook's
Chinese prose (Markdown outside code, formulas and links).

An English word is the course's when the course wrote it: it appears in a string literal of the English
release's code or in a message of :mod:`tfcourse` (its catalog; its other literals hold AG News examples,
which are data); in the prose, every English word not capitalised (a capitalised one names a person, a product,
a class of the data or a work: Vaswani, NVIDIA, World). Code names (every identifier in the notebook's code and
in :mod:`tfcourse`; a table's header counts unless it is one name, as ``text`` is) and the glossary's ``keep``
spellings (the words the Chinese keeps in English on purpose: API names, pow, top-k) are not counted, nor are the
few words PyTorch and tqdm print themselves (``LIBRARY_WORDS``); data (news texts, example sentences) is not the
course's prose.

The same run checks that the tables the notebooks print line up in Chinese (:data:`ALIGNED_COLUMNS`): a
Chinese character takes two columns, so a width counted in characters (``f"{name:18}"``) pushes a row of
Chinese names out of line.
"""

import ast
import html
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.settings import REPO_ROOT, release_notebook, source_notebook
from editions.messages import package_messages
from editions.release import edition_notebook as translated_release
from testbed.variants import VARIANTS
from tests.support.inprocess import CellOutcome, InProcessNotebook
from tfcourse.agnews import CLEANING_EXAMPLES, SAMPLE_DIR, read_ag_news
from tfcourse.language import EDITION_VARIABLE
from tfcourse.messages import display_width

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


# In the Chinese prose, English that is not the course's words: code, formulas, links (a paper's title, an address),
# markup, an English example in italics (*the* and *cat*), quoted English (a message, a name: “rotate half”), and
# an English gloss in full-width brackets after the Chinese term (批量维在前（batch-first）).
NOT_CHINESE_PROSE = re.compile(
    r"```.*?```|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|!?\[[^\]]*\]\([^)]*\)|https?://\S+|<[^>]+>"
    r"|(?<!\*)\*[A-Za-z'’ -]+\*(?!\*)|“[\x20-\x7e]+”|\"[\x20-\x7e]+\"|（[A-Za-z'’ -]+(?=[）；，])",
    re.S,
)


def prose(notebook: nbformat.NotebookNode) -> str:
    """The notebook's Chinese prose (Markdown) without what :data:`NOT_CHINESE_PROSE` matches."""
    return NOT_CHINESE_PROSE.sub(" ", "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown"))


def common_words(text: str) -> set[str]:
    """The English words of ``text`` that are not names: capitalised ones (Vaswani, AG News's class World, NVIDIA,
    The Annotated Transformer) name people, products, data and works, which Chinese writes in English too."""
    return {word.lower() for word in WORD.findall(text) if not word[0].isupper()}


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
    """Every title and description of the committed AG News sample, cleaned and as in the file, and the examples of
    the full corpus's artefacts, whitespace squeezed: the data 06 and 07 show."""
    frames = [read_ag_news(SAMPLE_DIR / name, clean=clean) for name in ("train.csv", "test.csv") for clean in (1, 0)]
    texts = [text for frame in frames for text in frame["text"]]
    texts += [text for _, raw, cleaned in CLEANING_EXAMPLES for text in (raw, cleaned)]
    return "\n".join(" ".join(text.split()) for text in texts)


def shows_data(line: str) -> bool:
    """Whether ``line`` prints a news text: a stretch of :data:`DATA_FRAGMENT` characters of one, or a quoted
    one whole (``'Owners Reach Deal (Reuters)'（10 个词元）``, where no stretch lies between the quotes), or the
    whole line a piece of one at least half as long (a table's cell: a title, the start of a text)."""
    squeezed = " ".join(line.split())
    step = DATA_FRAGMENT // 2
    quoted = [" ".join((single or double).split()) for single, double in QUOTED.findall(line)]
    if len(squeezed) >= DATA_FRAGMENT // 2 and squeezed.removesuffix("...") in news_texts():
        return True
    return any(len(text) >= DATA_FRAGMENT // 2 and text in news_texts() for text in quoted) or any(
        squeezed[start : start + DATA_FRAGMENT] in news_texts()
        for start in range(0, max(1, len(squeezed) - DATA_FRAGMENT + 1), step)
        if len(squeezed) >= DATA_FRAGMENT
    )


def english_words(texts: list[str], course: set[str], names: set[str]) -> list[str]:
    """The course's English words in ``texts``, one entry per occurrence, each with the line it is on."""
    code = {name.lower() for name in names}
    always = kept_spellings() | LIBRARY_WORDS | UNITS | SYMBOLS
    lines = [line for text in texts for line in text.splitlines() if not LIBRARY_WARNING.match(line.strip())]
    return [
        f"{word} (in: {line.strip()[:100]})"
        for line in lines
        for word in WORD.findall(NOT_PROSE.sub(" ", line.removeprefix(HEADER)))
        if word.lower() in course
        and word.lower() not in always
        and (word.lower() not in code or is_header_prose(line, code))
        and len(word) > 1
        and not shows_data(line)
    ]


# A table's header, on a line of its own: its words count even where the code uses them as names ("train rows"
# is prose, though train and rows are names), unless the header is one name (text, a column the code reads).
HEADER = "\x00header: "


def is_header_prose(line: str, code: set[str]) -> bool:
    header = line.removeprefix(HEADER)
    return line.startswith(HEADER) and header.lower() not in code


def headers(value: object) -> list[str]:
    """The column headers and index names of a DataFrame (or a Series' name and index name) that are text."""
    columns = getattr(value, "columns", [])
    index = getattr(value, "index", None)
    names = [*columns, getattr(columns, "name", None), getattr(index, "name", None), getattr(value, "name", None)]
    return [name for name in names if isinstance(name, str)]


SHOWN = "_tfcourse_shown_"  # where a cell's last value is kept, as IPython's display hook keeps it in Out


def shown_text(value: object) -> str:
    """What a notebook shows for a cell's value: the text of its HTML (a DataFrame's table) if it has one, else its
    repr, then each of its :func:`headers` on a line of its own; nothing for None."""
    if value is None:
        return ""
    as_html = getattr(value, "_repr_html_", None)
    markup = as_html() if callable(as_html) else None
    shown = (
        html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", " ", markup, flags=re.S)))
        if markup
        else repr(value)
    )
    return "\n".join([shown, *(HEADER + header for header in headers(value))])


class ShowingNotebook(InProcessNotebook):
    """:class:`InProcessNotebook` that also records what a cell displays: the value of its last expression (unless
    a ``;`` hides it), appended to the cell's standard output."""

    @staticmethod
    def _run_cell(index: int, cell_id: str | None, source: str, namespace: dict, draw: bool = False) -> CellOutcome:
        try:
            body = ast.parse(source).body
        except SyntaxError:
            body = []
        shows = body and isinstance(body[-1], ast.Expr) and not source.rstrip().endswith(";")
        if shows:
            lines = source.splitlines()
            last = body[-1]
            lines[last.lineno - 1] = lines[last.lineno - 1][: last.col_offset] + f"{SHOWN} = (" + lines[
                last.lineno - 1
            ][last.col_offset :]
            lines[last.end_lineno - 1] += ")"
            source = "\n".join(lines)
        outcome = InProcessNotebook._run_cell(index, cell_id, source, namespace, draw)
        if shows:
            outcome.stdout += shown_text(namespace.pop(SHOWN, None))
        return outcome


def printed(outcome: CellOutcome) -> list[str]:
    """What a cell showed the student: its output and display, its figures' text and a visible test's failure
    message."""
    failure = [outcome.error] if outcome.error.startswith("AssertionError") else []
    return [outcome.stdout, outcome.stderr, *outcome.figure_text, *failure]


# The columns of the tables the notebooks print in fast mode: cell id -> (a pattern matched at the start of each row,
# whose match ends where the column does, and how many rows at least it finds). Every row's column must end at the
# same display column (a Chinese character counts two). A name wider than its field pushes its row out too.
RIGHT_ALIGNED_NAME = r"^[^:：\n]+[:：]"  # "{name:>17}: ..." rows: the first colon, after the padded name
ALIGNED_COLUMNS: dict[str, dict[str, tuple[str, int]]] = {
    "04_encoder": {
        "f9d85912": (r"^\S.*? {2,}[\d,]+(?= \(|$)", 5),  # parameter counts: "{name:42} {count:>12,}"
        "cd23042b": (r"^.*? \|", 3),  # attention statistics: a padded row name, then "0.25 |"
    },
    "06_ag_news_classifier": {
        "3c365520": (r"^ *[A-Za-z/]+:", 4),  # one text per class, each class name right-aligned
        "4cf032fd": (RIGHT_ALIGNED_NAME, 2),  # the first step of two embedding initialisations
        "e4c1dfb0": (RIGHT_ALIGNED_NAME, 2),  # the keyword-count task: masked_mean and your pooling
    },
    "07_language_model": {
        "f6bf1fa5": (RIGHT_ALIGNED_NAME, 3),  # the baselines' losses
        "827d27b5": (RIGHT_ALIGNED_NAME, 2),  # attention timings: your function and PyTorch's kernels
    },
}


def misaligned_columns(assignment: str, run: InProcessNotebook) -> list[str]:
    """Each table of :data:`ALIGNED_COLUMNS` whose rows do not end their column at one display column, or that has
    fewer rows than it should."""
    printed_by = {run.cells[outcome.index].id: outcome.stdout for outcome in run.reference}
    problems = []
    for cell_id, (pattern, at_least) in ALIGNED_COLUMNS.get(assignment, {}).items():
        rows = [line for line in printed_by.get(cell_id, "").splitlines() if re.match(pattern, line)]
        ends = {display_width(re.match(pattern, line).group(0)) for line in rows}
        if len(rows) < at_least or len(ends) > 1:
            problems.append(
                f"cell {cell_id}: {len(rows)} rows (expected at least {at_least}), their column ends at display "
                f"columns {sorted(ends)}: {rows}. Pad by display width (tfcourse.text.pad, or a width inside a tr() "
                "message), not by characters as f'{name:18}' does, and keep each name (its translation too) within "
                "its field's width."
            )
    return problems


def english_in_runs(assignment: str, folder: Path, monkeypatch: pytest.MonkeyPatch, edition: str | None = None):
    """The course's English words a Chinese student meets, per run (the prose, the reference answers, each mutant).

    The Chinese release, its answers filled in, is written to ``folder`` and runs from there in fast mode, with
    neither ``TFCOURSE_EDITION`` nor ``JPY_SESSION_NAME`` set (as nbconvert runs it), or with ``TFCOURSE_EDITION``
    set to ``edition`` (as JupyterLab runs it after ``make lab EDITION=zh``). Also returns the glyphs no font had
    and the tables whose columns do not line up (:func:`misaligned_columns`).
    """
    english = nbformat.read(release_notebook(assignment), as_version=4)
    code = "\n".join(cell.source for cell in english.cells if cell.cell_type == "code")
    course_words = string_words(code) | {w.lower() for m in package_messages() for w in WORD.findall(m)}
    names = code_names(code) | code_names(package_code())
    source = nbformat.read(source_notebook(assignment), as_version=4)
    answers = reference_answers(source)
    chinese_release = nbformat.read(translated_release("zh", assignment), as_version=4)
    chinese = fill_answers(chinese_release, answers)
    nbformat.write(chinese, folder / f"{assignment}.ipynb")

    prose_text = prose(chinese_release)
    found = {"prose": english_words([prose_text], common_words(prose_text), names)}
    monkeypatch.chdir(folder)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    if edition is None:
        monkeypatch.delenv(EDITION_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(EDITION_VARIABLE, edition)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # fast mode, as under the grader
    run = ShowingNotebook(chinese, draw_figures=True)
    found["reference answers"] = english_words([t for o in run.reference for t in printed(o)], course_words, names)
    for cell in answers:
        wrong = next((v for v in VARIANTS.get(assignment, []) if v.cell == cell and v.kind == "mutant"), None)
        if wrong is None:
            continue
        outcomes = run.grade({cell: wrong.apply(answers[cell])}, tests_of=cell)
        found[f"mutant {wrong.name}"] = english_words(
            [t for o in outcomes.values() for t in printed(o)], course_words, names
        )
    glyphs = [problem for outcome in run.reference for problem in outcome.missing_glyphs]
    return found, glyphs, misaligned_columns(assignment, run)


def test_the_chinese_notebook_shows_no_english_the_course_wrote(assignment: str, monkeypatch, tmp_path) -> None:
    found, missing, misaligned = english_in_runs(assignment, tmp_path, monkeypatch)
    assert not missing, f"{assignment}: the Chinese figures miss glyphs (drawn as boxes): {missing[:5]}"
    assert not misaligned, f"{assignment}: a printed table does not line up in Chinese: " + "; ".join(misaligned)
    counts = {case: len(words) for case, words in found.items() if words}
    print(f"{assignment}: English words the course wrote, per run: {counts or 0}")
    assert not counts, f"{assignment}: English the course wrote reaches a Chinese student: " + "; ".join(
        f"{case}: {words[:8]}" for case, words in found.items() if words
    )
