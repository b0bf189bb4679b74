"""AG News: read the CSV files, clean the corpus's artefacts, find the data, split it.

The data is the *AG's News Topic Classification Dataset* (Xiang Zhang, Junbo Zhao and
Yann LeCun, "Character-level Convolutional Networks for Text Classification", NIPS 2015),
built from A. Gulli's AG corpus of news articles: 120,000 training and 7,600 test rows,
four balanced classes. See ``data/README.md`` for its source, licence terms and checksums.

* :func:`read_ag_news` reads both CSV forms found in the wild: the original headerless
  file (``"3","title","description"``) and the headered ``Class Index,Title,Description``
  form of many course mirrors. It checks every row and raises :class:`AGNewsFormatError`
  naming the file, the row and the field.
* :func:`clean_text` undoes the corpus's artefacts (``\\`` for a line break, ``#39;`` for
  ``'``, escaped markup such as ``&lt;b&gt;...&lt;/b&gt;``); :data:`CLEANING_EXAMPLES`
  and :func:`count_artefacts` show them.
* :func:`locate_data` finds the full dataset (``make data`` downloads it into
  ``data/ag_news/``, or ``$TFCOURSE_AG_NEWS_DIR`` points to it) and falls back to the small
  committed sample in ``data/ag_news_sample/``; :func:`locate_test_split` finds the real
  test split alone.
* :func:`stratified_split` takes the first rows of each class, in file order.
"""

from __future__ import annotations

import codecs
import csv
import html
import io
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from tfcourse.messages import tr

CLASSES = ("World", "Sports", "Business", "Sci/Tech")  # label 0..3 = the file's class index 1..4
COLUMNS = ("label", "title", "description", "text")
HEADER = ("Class Index", "Title", "Description")  # the headered form's first row

DATA_ENV_VAR = "TFCOURSE_AG_NEWS_DIR"  # a folder holding train.csv and test.csv (or test.csv alone)
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO_ROOT / "data" / "ag_news"  # where `make data` downloads (git-ignored)
CHECKOUT_SAMPLE_DIR = REPO_ROOT / "data" / "ag_news_sample"  # the committed sample


def installed_sample_dir() -> Path | None:
    """Where an install from a wheel or an archive put the sample (pyproject.toml's data-files), or None."""
    try:
        files = distribution("tfcourse").files or []
    except PackageNotFoundError:
        return None
    found = [file for file in files if file.name == "train.csv" and file.parent.name == "ag_news_sample"]
    return Path(str(found[0].locate())).parent if found else None


# The checkout's sample; in an install without a checkout (a hosted service), the copy installed with the package.
SAMPLE_DIR = CHECKOUT_SAMPLE_DIR if CHECKOUT_SAMPLE_DIR.is_dir() else installed_sample_dir() or CHECKOUT_SAMPLE_DIR

# The committed sample: the first SAMPLE_PER_CLASS rows of each class of the official test split,
# in file order; of each class the first SAMPLE_TRAIN_PER_CLASS go to train.csv, the rest to test.csv.
SAMPLE_PER_CLASS = 750
SAMPLE_TRAIN_PER_CLASS = 600
SAMPLE_TEST_PER_CLASS = SAMPLE_PER_CLASS - SAMPLE_TRAIN_PER_CLASS
# The benchmark's fixed split of the real test split: the first 1,500 rows of each class to
# train, the other 400 of each class (1,600 rows) to evaluate. The sample lies inside the first part.
BENCHMARK_TRAIN_PER_CLASS = 1500


class AGNewsFormatError(ValueError):
    """A malformed AG News file: the message names the file, the 1-based row and the field."""

    def __init__(
        self, path: str | Path, row: int | None, problem: str, field: str | None = None, line: int | None = None
    ) -> None:
        self.path, self.row, self.field, self.problem, self.line = str(path), row, field, problem, line
        where = str(path) if row is None else f"{path}, row {row}"
        if row is not None and line is not None and line != row:
            where += f" (line {line})"
        super().__init__(f"{where}: {field}: {problem}" if field else f"{where}: {problem}")


# ---------------------------------------------------------------------------------------------
# Cleaning
# ---------------------------------------------------------------------------------------------

# The corpus was scraped from RSS feeds in 2004-2005 and escaped on the way:
# - a line break inside a description is written as a single backslash ("A second\team" is
#   "A second" + line break + "team"); two backslashes are a paragraph break;
# - a dollar sign is escaped as "\$";
# - every "&" of an HTML entity was replaced by a space: "China #39;s" was "China&#39;s",
#   "AT amp;T" was "AT&amp;T", " quot;" was "&quot;";
# - markup from the feeds survives escaped: "&lt;b&gt;...&lt;/b&gt;" ends truncated headlines,
#   "&lt;a href=...&gt;" wraps links; Reuters' stock tickers ("Dell Inc. &lt;DELL.O&gt;") are text.
_DOLLAR_ESCAPE = re.compile(r"\\(?=\$)")
_BACKSLASHES = re.compile(r"\\+")
# An entity whose "&" became a space (the space is eaten) or vanished (at a non-word boundary; not
# right after ";", so that a double escape such as "amp;lt;" stays one: "&amp;lt;" -> "&lt;" -> "<").
_BARE_ENTITY = re.compile(r"(?: |(?<![&\w;]))(#\d+|#[xX][0-9a-fA-F]+|quot|amp|apos|lt|gt|nbsp);")
# Real HTML tags only: "<b>", "</a>", "<font size=-1>", "<img ... />"; not tickers such as "<DELL.O>".
_TAG_NAMES = (
    "a|abbr|b|big|blockquote|br|center|cite|code|div|em|font|h[1-6]|hr|i|img|li|nobr|ol|p|pre|q|s|small"
    "|span|strike|strong|sub|sup|table|tbody|td|th|tr|tt|u|ul"
)
_TAG = re.compile(rf"</?(?:{_TAG_NAMES})(?:\s[^<>]*)?/?>", re.IGNORECASE)
# Entities such as #151; (Windows-1252 em dash) decode to typographic punctuation; the rest of the
# corpus is plain ASCII, so fold it back: "‘How’s" -> "'How's", "—" -> "--" (the corpus's own dash).
_PUNCTUATION = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2013": "-",
        "\u2014": "--",
        "\u2015": "--",
        "\u2026": "...",
        "\u00a0": " ",
    }
)
_NEEDS_WORK = re.compile(r"[\\;<&\u0080-\uffff]")


def clean_text(text: str) -> str:
    """``text`` without the AG News artefacts, on one line with single spaces.

    In this order: ``\\$`` becomes ``$``; any other run of backslashes (an escaped line or
    paragraph break) becomes a space; entities that lost their ``&`` get it back (``#36;`` ->
    ``$``, ``#39;`` -> ``'``, ``quot;`` -> ``"``, ``amp;`` -> ``&``, ``lt;``/``gt;`` -> ``<``/``>``,
    ``#151;`` -> ``--``; the space that replaced the ``&`` goes too: ``AT amp;T`` -> ``AT&T``);
    HTML entities are decoded (twice at most, for double escapes); HTML tags are removed, their
    text kept (``&lt;b&gt;...&lt;/b&gt;`` -> ``...``, a link -> its text), while Reuters'
    tickers such as ``<DELL.O>`` stay; typographic quotes and dashes become ASCII; whitespace
    runs become one space. What cannot be undone: some "&" vanished with no trace
    (``Turner   Newall`` was ``Turner & Newall``); it becomes ``Turner Newall``.
    """
    if not _NEEDS_WORK.search(text):
        return " ".join(text.split())
    if "\\" in text:
        text = _BACKSLASHES.sub(" ", _DOLLAR_ESCAPE.sub("", text))
    if ";" in text:
        text = _BARE_ENTITY.sub(r"&\1;", text)
    for _ in range(2):
        if "&" not in text:
            break
        text = html.unescape(text)
    if "<" in text:
        text = _TAG.sub(" ", text)
    if not text.isascii():
        text = text.translate(_PUNCTUATION)
    return " ".join(text.split())


# What the raw files contain, counted by count_artefacts() on raw text.
ARTEFACTS = {
    "backslash line break (\\)": re.compile(r"\\+(?!\$)"),
    "escaped dollar (\\$)": re.compile(r"\\\$"),
    "entity without & (#39; #36; #151; ...)": re.compile(r"(?<!&)#(?:\d+|[xX][0-9a-fA-F]+);"),
    "named entity without & (quot; amp; lt; gt;)": re.compile(r"(?<![&\w])(?:quot|amp|apos|lt|gt|nbsp);"),
    "escaped HTML tag (&lt;b&gt; &lt;a href=...&gt;)": re.compile(
        rf"&lt;/?(?:{_TAG_NAMES})(?:\s[^&]*?)?/?&gt;", re.IGNORECASE
    ),
    "runs of whitespace": re.compile(r"\s{2,}"),
}


class CleaningExample(NamedTuple):
    """One artefact of the corpus: its name (a message, shown in the reader's language with ``tr(artefact)``),
    a raw text holding it and that text after :func:`clean_text`."""

    artefact: str
    raw: str
    cleaned: str


# Real examples, copied from the official test split (tests check that each raw string occurs
# there and that clean_text turns it into the cleaned one).
CLEANING_EXAMPLES = (
    CleaningExample(
        "backslash line break",
        "A second\\team of rocketeers competing for the",
        "A second team of rocketeers competing for the",
    ),
    CleaningExample(
        "escaped dollar",
        "a record indecency fine of nearly \\$1.2 million",
        "a record indecency fine of nearly $1.2 million",
    ),
    CleaningExample(
        "#36; (dollar)",
        "competing for the  #36;10 million Ansari X Prize",
        "competing for the $10 million Ansari X Prize",
    ),
    CleaningExample("#39; (apostrophe)", "China #39;s economy still sizzling", "China's economy still sizzling"),
    CleaningExample(
        "quot; (double quote)",
        "matchups labelled  quot;Super Bowl Preview quot; or",
        'matchups labelled "Super Bowl Preview" or',
    ),
    CleaningExample("amp; (ampersand)", "purchase of AT amp;T Wireless today", "purchase of AT&T Wireless today"),
    CleaningExample("gt; (greater-than)", "India News  gt; Guwahati, Oct 2", "India News > Guwahati, Oct 2"),
    CleaningExample(
        "#151; (em dash, Windows-1252)",
        "Serena Williams is in love  #151; with her new attacking game",
        "Serena Williams is in love -- with her new attacking game",
    ),
    CleaningExample(
        "#145; #146; (curly quotes)",
        "#145;How #146;s it compare to the iPod? #146; I asked",
        "'How's it compare to the iPod?' I asked",
    ),
    CleaningExample(
        "truncated headline (&lt;b&gt;...&lt;/b&gt;)",
        "sends stocks surging despite higher &lt;b&gt;...&lt;/b&gt;",
        "sends stocks surging despite higher ...",
    ),
    CleaningExample(
        "escaped link (&lt;a href&gt;)",
        '&lt;a href="http://arstechnica.com/news/posts/20040923-4222.html"&gt;Sony considers adding'
        " native mp3 support to its players&lt;/a&gt;",
        "Sony considers adding native mp3 support to its players",
    ),
    CleaningExample(
        "stock ticker (kept)",
        "HONG KONG (Reuters) - Dell Inc. &lt;DELL.O&gt;, the world's  largest PC maker",
        "HONG KONG (Reuters) - Dell Inc. <DELL.O>, the world's largest PC maker",
    ),
    CleaningExample(
        "lost ampersand (cannot be undone)", "workers at Turner   Newall say", "workers at Turner Newall say"
    ),
)


def count_artefacts(texts: Iterable[str]) -> pd.DataFrame:
    """How often each artefact of :data:`ARTEFACTS` occurs in raw ``texts``, with a real example.

    Columns: ``artefact``, ``occurrences``, ``rows`` (texts holding it at least once), ``example``
    (the first occurrence with some context) and ``cleaned`` (that context after :func:`clean_text`).
    Pass raw text (``read_ag_news(path, clean=False)["text"]``); on cleaned text every count
    but the whitespace one should be 0.
    """
    texts = list(texts)
    records = []
    for name, regex in ARTEFACTS.items():
        occurrences = rows = 0
        example = ""
        for text in texts:
            found = regex.findall(text)
            if found:
                occurrences += len(found)
                rows += 1
                if not example:
                    match = regex.search(text)  # some context, cut at spaces (entities hold none)
                    start = text.rfind(" ", 0, max(0, match.start() - 25)) + 1
                    end = text.find(" ", min(len(text), match.end() + 25))
                    example = text[start : end if end >= 0 else len(text)]
        records.append(
            {
                "artefact": name,
                "occurrences": occurrences,
                "rows": rows,
                "example": example,
                "cleaned": clean_text(example) if example else "",
            }
        )
    return pd.DataFrame.from_records(records, columns=["artefact", "occurrences", "rows", "example", "cleaned"])


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------

_DIGITS = re.compile(r"[0-9]+")
_UNDECODABLE = re.compile("[\udc80-\udcff]")  # what errors="surrogateescape" turns bad bytes into
_FIELD_NAMES = ("class index", "title", "description")


def _is_header(fields: list[str]) -> bool:
    names = [field.strip().lower() for field in fields]
    return len(names) == 3 and names[0] in {"class index", "class", "label"} and names[1:] == ["title", "description"]


def read_ag_news(path: str | Path, clean: bool = True) -> pd.DataFrame:
    """Read an AG News CSV file into a frame with columns ``label``, ``title``, ``description``, ``text``.

    Reads the original headerless form (``"3","Wall St. Bears ...","Reuters - ..."``) and the
    headered form whose first row is ``Class Index,Title,Description`` (detected from the
    first row). ``label`` is the class index minus one (0 World, 1 Sports, 2 Business,
    3 Sci/Tech, see :data:`CLASSES`). With ``clean=True`` (default) ``title`` and
    ``description`` go through :func:`clean_text`; ``clean=False`` keeps them as in the file.
    ``text`` is the title and the description joined by one space, the way torchtext's
    ``AG_NEWS`` and the published baselines feed the classifier (the end of the title is not
    marked; an empty title or description is left out).

    The file must be UTF-8 (a leading byte-order mark is accepted) and every row must hold
    exactly three fields, a class index 1-4 and a non-empty title or description. Anything else
    raises :class:`AGNewsFormatError` naming the file, the 1-based row (the header is row 1;
    the line is added when a quoted field spans lines) and the field.
    """
    path = Path(path)
    data = path.read_bytes()
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    if not data.strip():
        raise AGNewsFormatError(path, None, "the file is empty (expected rows of class index, title, description)")
    try:
        content, check_encoding = data.decode("utf-8"), False
    except UnicodeDecodeError:  # find the row: bad bytes become lone surrogates, which UTF-8 cannot hold
        content, check_encoding = data.decode("utf-8", errors="surrogateescape"), True

    reader = csv.reader(io.StringIO(content, newline=""), strict=True)
    labels: list[int] = []
    titles: list[str] = []
    descriptions: list[str] = []
    texts: list[str] = []
    row = 0
    blank_row = None  # a blank line is an error unless only blank lines follow it
    while True:
        line = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise AGNewsFormatError(path, row + 1, f"not valid CSV ({error})", line=line) from None
        row += 1
        if not fields:
            blank_row = blank_row or (row, line)
            continue
        if blank_row:
            raise AGNewsFormatError(path, blank_row[0], "the row is empty (a blank line)", line=blank_row[1])
        if check_encoding:
            for name, value in zip(_FIELD_NAMES, fields, strict=False):
                bad = _UNDECODABLE.search(value)
                if bad:
                    byte = ord(bad.group()) - 0xDC00
                    raise AGNewsFormatError(
                        path,
                        row,
                        f"not valid UTF-8 (byte 0x{byte:02x}); the file must be UTF-8: it may be Latin-1 or "
                        "Windows-1252, so re-save it as UTF-8 or download it again",
                        field=name,
                        line=line,
                    )
        if row == 1 and not _DIGITS.fullmatch(fields[0].strip()) and _is_header(fields):
            continue
        if len(fields) != 3:
            if len(fields) < 3:
                missing = " and ".join(_FIELD_NAMES[len(fields) :])
                problem = f"expected 3 fields (class index, title, description), found {len(fields)}: {missing} missing"
            else:
                problem = (
                    f"expected 3 fields (class index, title, description), found {len(fields)}: "
                    "is a comma outside the quotes?"
                )
            raise AGNewsFormatError(path, row, problem, line=line)
        index, title, description = fields
        if not _DIGITS.fullmatch(index.strip()):
            hint = f" (and row 1 is not the header {','.join(HEADER)!r})" if row == 1 else ""
            raise AGNewsFormatError(
                path, row, f"{index!r} is not a class index 1-4{hint}", field="class index", line=line
            )
        number = int(index)
        if not 1 <= number <= 4:
            hint = " (0-based labels? the AG News files number the classes 1-4)" if number == 0 else ""
            raise AGNewsFormatError(path, row, f"{number} is outside 1-4{hint}", field="class index", line=line)
        if not title.strip() and not description.strip():
            raise AGNewsFormatError(path, row, "title and description are both empty", field="text", line=line)
        if clean:
            title, description = clean_text(title), clean_text(description)
            text = f"{title} {description}" if title and description else title or description
            if not text:
                raise AGNewsFormatError(
                    path,
                    row,
                    f"title and description are empty after cleaning (only markup: {fields[1:]!r})",
                    field="text",
                    line=line,
                )
        else:
            text = f"{title} {description}"
        labels.append(number - 1)
        titles.append(title)
        descriptions.append(description)
        texts.append(text)
    if not labels:
        raise AGNewsFormatError(path, None, "the file has a header but no data rows")
    frame = pd.DataFrame(
        {"label": np.asarray(labels, dtype=np.int64), "title": titles, "description": descriptions, "text": texts}
    )
    frame.attrs["path"] = str(path)
    return frame


# ---------------------------------------------------------------------------------------------
# Finding the data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AGNewsFiles:
    """The train and test files to use, and a sentence saying which data they are."""

    train: Path
    test: Path
    source: str  # e.g. "the full AG News dataset in data/ag_news" or "the committed sample of 3,000 rows ..."
    is_sample: bool


def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it (shorter in notebook output), else absolute."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path.resolve())


def download_command(os_name: str = os.name) -> str:
    """The command that downloads the full dataset: ``make data`` in the repository; in the student kit, which has
    no Makefile, the kit's own (its ``.venv``'s Python, run in the kit's folder; ``os_name`` as :data:`os.name`)."""
    if (REPO_ROOT / "Makefile").is_file():
        return "make data"
    python = r".venv\Scripts\python" if os_name == "nt" else ".venv/bin/python"
    return f"{python} -m tfcourse.download"


def _candidate_dirs(data_dir: str | Path | None) -> list[tuple[Path, str]]:
    if data_dir is not None:
        return [(Path(data_dir).expanduser(), "data_dir")]
    candidates = []
    if os.environ.get(DATA_ENV_VAR, "").strip():
        candidates.append((Path(os.environ[DATA_ENV_VAR].strip()).expanduser(), f"${DATA_ENV_VAR}"))
    candidates.append((DEFAULT_DATA_DIR, f"`{download_command()}`"))
    return candidates


def locate_data(data_dir: str | Path | None = None) -> AGNewsFiles:
    """The full dataset when its two files are found, otherwise the committed sample.

    Looks in ``data_dir`` when given; otherwise in ``$TFCOURSE_AG_NEWS_DIR`` when set, then in
    ``data/ag_news/`` (where ``make data`` downloads). The first folder holding both
    ``train.csv`` and ``test.csv`` wins. Otherwise the files are the committed sample in
    ``data/ag_news_sample/`` (:data:`SAMPLE_PER_CLASS` rows per class of the official *test*
    split), and ``source`` says so, with what was missing where (for example a folder that has
    ``test.csv`` only: that is the benchmark's setting, see :func:`locate_test_split`).
    Print ``source`` so a reader knows which data a run used. ``locate_data(SAMPLE_DIR)`` or
    :func:`sample_files` gives the sample even when the full dataset is there.
    """
    notes = []
    for folder, origin in _candidate_dirs(data_dir):
        if folder.resolve() == SAMPLE_DIR.resolve():
            return sample_files()
        train, test, shown = folder / "train.csv", folder / "test.csv", _shown(folder)
        if train.is_file() and test.is_file():
            source = tr("the full AG News dataset in {folder} (from {origin})", folder=shown, origin=origin)
            return AGNewsFiles(train, test, source, False)
        if test.is_file():
            notes.append(tr("{folder} (from {origin}) has test.csv but no train.csv", folder=shown, origin=origin))
        elif train.is_file():
            notes.append(tr("{folder} (from {origin}) has train.csv but no test.csv", folder=shown, origin=origin))
        elif origin != f"`{download_command()}`":
            notes.append(tr("{folder} (from {origin}) has neither train.csv nor test.csv", folder=shown, origin=origin))
    return sample_files(notes)


def sample_files(notes: Iterable[str] = ()) -> AGNewsFiles:
    """The committed sample, whatever else is there (fast mode may want it even after `make data`).

    ``notes`` (why the full dataset was not used) are appended to ``source``.
    """
    notes = list(notes)
    train, test = SAMPLE_DIR / "train.csv", SAMPLE_DIR / "test.csv"
    if not (train.is_file() and test.is_file()):
        raise FileNotFoundError(
            f"no AG News data: neither the full dataset ({'; '.join(notes) or f'run `{download_command()}`'}) nor "
            f"the committed sample ({SAMPLE_DIR}/train.csv and test.csv) is there. Run `{download_command()}`, or set "
            f"{DATA_ENV_VAR} to a folder holding train.csv and test.csv."
        )
    source = tr(
        "the committed sample of {rows:,} rows ({train:,} train, {test:,} test, a stratified subset of the official "
        "test split) in {folder}; `{command}` fetches the full dataset",
        command=download_command(),
        rows=4 * SAMPLE_PER_CLASS,
        train=4 * SAMPLE_TRAIN_PER_CLASS,
        test=4 * SAMPLE_TEST_PER_CLASS,
        folder=_shown(SAMPLE_DIR),
    )
    if notes:
        source += f" ({'; '.join(notes)})"
    return AGNewsFiles(train, test, source, True)


def locate_test_split(data_dir: str | Path | None = None) -> Path | None:
    """The full official test split (``test.csv``, 7,600 rows) if found, else ``None``; never the sample.

    Same search as :func:`locate_data` (``data_dir``, else ``$TFCOURSE_AG_NEWS_DIR``, else
    ``data/ag_news/``), but a folder with ``test.csv`` alone is enough: the benchmark trains
    on ``stratified_split(read_ag_news(path), BENCHMARK_TRAIN_PER_CLASS)[0]`` and evaluates on
    the rest. The committed sample lies inside that first part, so the rest (the last 400 rows
    of each class) never overlaps it; the whole test split does (see ``data/README.md``).
    """
    for folder, _ in _candidate_dirs(data_dir):
        if (folder / "test.csv").is_file() and folder.resolve() != SAMPLE_DIR.resolve():
            return folder / "test.csv"
    return None


# ---------------------------------------------------------------------------------------------
# Splitting and the committed sample
# ---------------------------------------------------------------------------------------------


def stratified_split(frame: pd.DataFrame, per_class: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(first, rest)``: the first ``per_class`` rows of each class in file order, and all the others.

    Both keep the file order and get a fresh 0..n-1 index. Raises ``ValueError`` when a class
    has fewer than ``per_class`` rows. ``stratified_split(test, 1500)`` on the real test split
    is the benchmark's fixed split: 6,000 rows to train, 1,600 (400 per class) to evaluate.
    """
    if per_class < 0:
        raise ValueError(f"per_class must be >= 0, got {per_class}")
    counts = frame["label"].value_counts()
    short = {
        CLASSES[label]: int(counts.get(label, 0)) for label in range(len(CLASSES)) if counts.get(label, 0) < per_class
    }
    if short:
        raise ValueError(f"stratified_split: {per_class} rows per class asked, but these classes have fewer: {short}")
    first = frame.groupby("label", sort=False).cumcount() < per_class
    return frame[first].reset_index(drop=True), frame[~first].reset_index(drop=True)


def write_sample(
    source: str | Path,
    destination: str | Path = SAMPLE_DIR,
    per_class: int = SAMPLE_PER_CLASS,
    train_per_class: int = SAMPLE_TRAIN_PER_CLASS,
) -> tuple[Path, Path]:
    """Write the committed sample from the official test split ``source``: ``(train.csv, test.csv)``.

    The rule: the first ``per_class`` rows of each class of ``source`` in file order; of each
    class the first ``train_per_class`` go to ``train.csv``, the others to ``test.csv``; file
    order kept; the raw fields in the original headerless, fully quoted form, so each row is
    byte-identical to its line in the source. This is how ``data/ag_news_sample`` was made::

        python -c "from tfcourse.agnews import write_sample; write_sample('$TFCOURSE_AG_NEWS_DIR/test.csv')"
    """
    raw = read_ag_news(source, clean=False)
    chosen, _ = stratified_split(raw, per_class)
    train, test = stratified_split(chosen, train_per_class)
    destination = Path(destination)
    destination.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, part in (("train.csv", train), ("test.csv", test)):
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerows(zip((part["label"] + 1).astype(str), part["title"], part["description"], strict=True))
        (destination / name).write_bytes(buffer.getvalue().encode("utf-8"))
        paths.append(destination / name)
    return paths[0], paths[1]
