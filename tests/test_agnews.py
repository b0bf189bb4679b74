"""The AG News data layer: both CSV forms, clear errors, cleaning, finding the data, the committed sample.

The tests marked "real" read the official test split through ``$TFCOURSE_AG_NEWS_DIR``
(``.ci/run`` sets it): they skip when it is unset on a workstation, and fail in CI.
"""

import hashlib
import os
from pathlib import Path

import pandas as pd
import pytest

from tfcourse import agnews
from tfcourse.agnews import (
    CLASSES,
    CLEANING_EXAMPLES,
    AGNewsFormatError,
    clean_text,
    count_artefacts,
    locate_data,
    locate_test_split,
    read_ag_news,
    stratified_split,
    write_sample,
)
from tfcourse.download import TEST

HEADERLESS = (
    '"3","Wall St. Bears Claw Back Into the Black (Reuters)","Reuters - Short-sellers, Wall Street\'s dwindling\\'
    'band of ultra-cynics, are seeing green again."\n'
    '"4","Ky. Company Wins Grant (AP)","AP - A company won a grant of  #36;10 million."\n'
    '"1","Talks  quot;stall quot;","UN envoy: AT amp;T #39;s role."\n'
    '"2","Phelps wins gold","Michael Phelps won his first gold medal."\n'
)
HEADERED = (
    "Class Index,Title,Description\n"
    "3,Wall St. Bears Claw Back Into the Black (Reuters),\"Reuters - Short-sellers, Wall Street's dwindling\\"
    'band of ultra-cynics, are seeing green again."\n'
    "4,Ky. Company Wins Grant (AP),AP - A company won a grant of  #36;10 million.\n"
    "1,Talks  quot;stall quot;,UN envoy: AT amp;T #39;s role.\n"
    "2,Phelps wins gold,Michael Phelps won his first gold medal.\n"
)


def write(tmp_path: Path, text: str | bytes, name: str = "news.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def real_test_split() -> Path:
    """The official test split, through $TFCOURSE_AG_NEWS_DIR; skipped outside CI when unset, failed in CI."""
    folder = os.environ.get(agnews.DATA_ENV_VAR, "").strip()
    if not folder:
        if os.environ.get("CI"):
            pytest.fail(f"CI must set {agnews.DATA_ENV_VAR} to the folder holding the real test.csv (see .ci/run)")
        pytest.skip(f"set {agnews.DATA_ENV_VAR} to the folder holding the real AG News test.csv")
    path = Path(folder) / "test.csv"
    assert path.is_file(), f"{agnews.DATA_ENV_VAR}={folder} holds no test.csv"
    return path


# --- reading -----------------------------------------------------------------------------------


def test_headerless_and_headered_forms_read_the_same(tmp_path):
    plain = read_ag_news(write(tmp_path, HEADERLESS, "plain.csv"))
    headered = read_ag_news(write(tmp_path, HEADERED, "headered.csv"))
    pd.testing.assert_frame_equal(plain, headered, check_like=False, check_flags=False)
    assert list(plain.columns) == ["label", "title", "description", "text"]
    assert plain["label"].tolist() == [2, 3, 0, 1] and plain["label"].dtype == "int64"
    assert (
        plain["description"][0]
        == "Reuters - Short-sellers, Wall Street's dwindling band of ultra-cynics, are seeing green again."
    )
    assert plain["text"][1] == "Ky. Company Wins Grant (AP) AP - A company won a grant of $10 million."
    assert plain["text"][2] == 'Talks "stall" UN envoy: AT&T\'s role.'
    assert [CLASSES[label] for label in plain["label"]] == ["Business", "Sci/Tech", "World", "Sports"]


def test_raw_reading_keeps_the_file_text(tmp_path):
    raw = read_ag_news(write(tmp_path, HEADERLESS), clean=False)
    assert raw["description"][1] == "AP - A company won a grant of  #36;10 million."
    assert raw["text"][2] == "Talks  quot;stall quot; UN envoy: AT amp;T #39;s role."


@pytest.mark.parametrize("form", ["crlf", "bom", "trailing blank line", "header with bom and crlf"])
def test_line_endings_byte_order_mark_and_a_final_blank_line_are_accepted(tmp_path, form):
    text = {
        "crlf": HEADERLESS.replace("\n", "\r\n"),
        "bom": "\ufeff" + HEADERLESS,
        "trailing blank line": HEADERLESS + "\n",
        "header with bom and crlf": "\ufeff" + HEADERED.replace("\n", "\r\n"),
    }[form]
    pd.testing.assert_frame_equal(
        read_ag_news(write(tmp_path, text)), read_ag_news(write(tmp_path, HEADERLESS, "ok.csv"))
    )


def test_a_quoted_line_break_is_one_row(tmp_path):
    frame = read_ag_news(write(tmp_path, '"1","Title","first line\nsecond line"\n"2","T","D"\n'))
    assert len(frame) == 2 and frame["description"][0] == "first line second line"


BAD_INPUTS = {
    "missing description": ('"1","a","b"\n"2","c","d"\n"3","only a title"\n', 3, ["description missing"]),
    "missing title and description": ('"1","a","b"\n"2"\n', 2, ["title and description missing"]),
    "extra field": ('"1","a","b"\n"2","c","d","e"\n', 2, ["found 4"]),
    "label 5": ('"1","a","b"\n"5","c","d"\n', 2, ["class index", "5 is outside 1-4"]),
    "label 0": ('"0","a","b"\n', 1, ["class index", "0 is outside 1-4", "0-based"]),
    "label not a number": ('"1","a","b"\n"x","c","d"\n', 2, ["class index", "'x' is not a class index"]),
    "label 1.0": ('"1.0","a","b"\n', 1, ["'1.0' is not a class index", "header"]),
    "unknown header": ("Label,Headline,Body\n1,a,b\n", 1, ["'Label' is not a class index", "Class Index"]),
    "empty text": ('"1","a","b"\n"2","c","d"\n"4","  ",""\n', 3, ["text", "both empty"]),
    "only markup": ('"1","&lt;b&gt;&lt;/b&gt;",""\n', 1, ["empty after cleaning"]),
    "blank line in the middle": ('"1","a","b"\n\n"2","c","d"\n', 2, ["blank line"]),
    "bad quoting": ('"1","a","b"\n"2","c"x,"d"\n', 2, ["not valid CSV"]),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_names_the_file_the_row_and_the_problem(tmp_path, case):
    text, row, phrases = BAD_INPUTS[case]
    path = write(tmp_path, text, "bad_news.csv")
    with pytest.raises(AGNewsFormatError) as caught:
        read_ag_news(path)
    message = str(caught.value)
    assert str(path) in message and f"row {row}" in message, message
    for phrase in phrases:
        assert phrase in message, message
    assert caught.value.row == row and isinstance(caught.value, ValueError)


def test_wrong_encoding_names_the_row_and_the_field(tmp_path):
    data = '"1","a","b"\n"2","Caf\u00e9 owners","d"\n'.encode("latin-1")
    path = write(tmp_path, data, "latin1.csv")
    with pytest.raises(AGNewsFormatError) as caught:
        read_ag_news(path)
    message = str(caught.value)
    assert f"{path}, row 2: title: not valid UTF-8 (byte 0xe9)" in message, message
    assert "UTF-8" in message and "Latin-1" in message


def test_utf16_is_a_wrong_encoding_at_row_1(tmp_path):
    path = write(tmp_path, HEADERLESS.encode("utf-16"), "utf16.csv")
    with pytest.raises(AGNewsFormatError, match=r"row 1: class index: not valid UTF-8"):
        read_ag_news(path)


@pytest.mark.parametrize("text", ["", "\n\n", "Class Index,Title,Description\n"])
def test_empty_file_or_header_only_is_an_error(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(AGNewsFormatError, match="empty|no data rows") as caught:
        read_ag_news(path)
    assert str(path) in str(caught.value)


def test_a_quoted_line_break_gives_the_line_as_well(tmp_path):
    path = write(tmp_path, '"1","a","two\nlines"\n"7","c","d"\n')
    with pytest.raises(AGNewsFormatError, match=r"row 2 \(line 3\): class index"):
        read_ag_news(path)


# --- cleaning ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("artefact", "raw", "cleaned"), CLEANING_EXAMPLES, ids=[e[0] for e in CLEANING_EXAMPLES])
def test_cleaning_examples(artefact, raw, cleaned):
    assert clean_text(raw) == cleaned


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("two\\\\paragraphs", "two paragraphs"),
        ("US\\$5", "US$5"),
        ("start\\", "start"),
        ("&lt;p&gt;\\&lt;/p&gt;&lt;p&gt; By Andrew Mitchell&lt;/p&gt;", "By Andrew Mitchell"),
        ('a &lt;A HREF="http://x/?ticker=S.N target=/q"&gt;S.N&lt;/A&gt; b', "a S.N b"),
        ("Agilent &lt;A.N&gt; rose", "Agilent <A.N> rose"),  # a ticker named A is not a link
        ('&lt;img src="http://ad/x;sz=1x1" width="1"/&gt;ADVERTISEMENT', "ADVERTISEMENT"),
        ("R amp;amp;D", "R&D"),  # a double escape
        ("x  amp;lt;b amp;gt;bold amp;lt;/b amp;gt; y", "x bold y"),
        ("no artefacts   here\tat all ", "no artefacts here at all"),
        ("#8212; dash  #038; co", "-- dash & co"),  # the "&" was replaced by a space
        ("", ""),
    ],
)
def test_clean_text_edge_cases(raw, cleaned):
    assert clean_text(raw) == cleaned


def test_count_artefacts_finds_them_in_raw_text_and_not_after_cleaning():
    raw = [example[1] for example in CLEANING_EXAMPLES]
    counts = count_artefacts(raw).set_index("artefact")
    assert list(counts.columns) == ["occurrences", "rows", "example", "cleaned"]
    assert (counts["occurrences"] > 0).all(), counts
    after = count_artefacts([clean_text(text) for text in raw]).set_index("artefact")
    assert after["occurrences"].sum() == 0, after


# --- finding the data ----------------------------------------------------------------------------


@pytest.fixture
def places(tmp_path, monkeypatch):
    """A fake `make data` folder and a fake sample; $TFCOURSE_AG_NEWS_DIR unset."""
    default = tmp_path / "repo" / "data" / "ag_news"
    sample = tmp_path / "repo" / "data" / "ag_news_sample"
    default.mkdir(parents=True)
    sample.mkdir()
    for name in ("train.csv", "test.csv"):
        (sample / name).write_text(HEADERLESS)
    monkeypatch.setattr(agnews, "DEFAULT_DATA_DIR", default)
    monkeypatch.setattr(agnews, "SAMPLE_DIR", sample)
    monkeypatch.delenv(agnews.DATA_ENV_VAR, raising=False)
    return default, sample


def full(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names or ("train.csv", "test.csv"):
        (folder / name).write_text(HEADERLESS)
    return folder


def test_without_full_data_the_committed_sample_is_used(places):
    _, sample = places
    found = locate_data()
    assert found.is_sample and found.train == sample / "train.csv" and found.test == sample / "test.csv"
    assert "committed sample of 3,000 rows" in found.source and "make data" in found.source


def test_make_data_folder_is_found(places):
    default, _ = places
    full(default)
    found = locate_data()
    assert not found.is_sample and found.train == default / "train.csv" and "full AG News dataset" in found.source


def test_the_environment_variable_comes_before_the_make_data_folder(places, tmp_path, monkeypatch):
    default, _ = places
    full(default)
    elsewhere = full(tmp_path / "elsewhere")
    monkeypatch.setenv(agnews.DATA_ENV_VAR, str(elsewhere))
    found = locate_data()
    assert found.test == elsewhere / "test.csv" and str(elsewhere) in found.source
    assert "TFCOURSE_AG_NEWS_DIR" in found.source


def test_an_explicit_folder_comes_first_and_alone(places, tmp_path, monkeypatch):
    default, _ = places
    full(default)
    monkeypatch.setenv(agnews.DATA_ENV_VAR, str(full(tmp_path / "env")))
    given = full(tmp_path / "given")
    assert locate_data(given).train == given / "train.csv"
    empty = tmp_path / "empty"
    empty.mkdir()
    found = locate_data(empty)  # not the env folder nor data/ag_news: the sample, and why
    assert found.is_sample and "has neither train.csv nor test.csv" in found.source


def test_a_folder_with_test_csv_only_says_so_and_gives_the_test_split(places, tmp_path, monkeypatch):
    default, _ = places
    only_test = full(tmp_path / "shared", "test.csv")
    monkeypatch.setenv(agnews.DATA_ENV_VAR, str(only_test))
    found = locate_data()
    assert found.is_sample and "has test.csv but no train.csv" in found.source and str(only_test) in found.source
    assert locate_test_split() == only_test / "test.csv"
    monkeypatch.delenv(agnews.DATA_ENV_VAR)
    assert locate_test_split() is None  # never the sample
    full(default, "train.csv")
    assert "has train.csv but no test.csv" in locate_data().source


def test_the_sample_on_request_even_with_the_full_data(places):
    default, sample = places
    full(default)
    for found in (agnews.sample_files(), locate_data(sample)):
        assert found.is_sample and found.train == sample / "train.csv" and "committed sample" in found.source
    assert locate_test_split(sample) is None


def test_no_data_at_all_says_what_to_do(places):
    _, sample = places
    (sample / "train.csv").unlink()
    with pytest.raises(FileNotFoundError, match="make data"):
        locate_data()


def test_in_the_student_kit_the_messages_name_the_kit_s_command_not_make(places, tmp_path, monkeypatch):
    # The kit (classroom/student_kit.py) holds tfcourse/ beside data/, and no Makefile.
    monkeypatch.setattr(agnews, "REPO_ROOT", tmp_path / "kit")
    found = locate_data()
    assert f"`{agnews.download_command()}` fetches the full dataset" in found.source
    assert "make" not in found.source
    assert agnews.download_command("posix") == ".venv/bin/python -m tfcourse.download"
    assert agnews.download_command("nt") == r".venv\Scripts\python -m tfcourse.download"
    monkeypatch.setattr(agnews, "REPO_ROOT", Path(__file__).resolve().parent.parent)
    assert agnews.download_command() == "make data"


# --- splitting -----------------------------------------------------------------------------------


def test_stratified_split_takes_the_first_rows_of_each_class_in_file_order():
    labels = [0, 1, 0, 2, 3, 0, 1, 2, 3, 3, 1, 2]
    frame = pd.DataFrame({"label": labels, "text": [f"row {i}" for i in range(len(labels))]})
    first, rest = stratified_split(frame, 2)
    assert first["text"].tolist() == ["row 0", "row 1", "row 2", "row 3", "row 4", "row 6", "row 7", "row 8"]
    assert rest["text"].tolist() == ["row 5", "row 9", "row 10", "row 11"]
    assert first.index.tolist() == list(range(8)) and rest.index.tolist() == list(range(4))
    assert stratified_split(frame, 3)[1].empty
    with pytest.raises(ValueError, match="fewer"):
        stratified_split(frame, 4)


# --- the committed sample --------------------------------------------------------------------------


def sample_rows() -> dict[str, list[bytes]]:
    rows = {}
    for name in ("train.csv", "test.csv"):
        data = (agnews.SAMPLE_DIR / name).read_bytes()
        assert data.endswith(b"\n") and b"\r" not in data
        rows[name] = data.splitlines()
    return rows


def test_committed_sample_is_balanced_headerless_and_without_duplicates():
    rows = sample_rows()
    train = read_ag_news(agnews.SAMPLE_DIR / "train.csv")
    test = read_ag_news(agnews.SAMPLE_DIR / "test.csv")
    assert len(rows["train.csv"]) == len(train) == 4 * agnews.SAMPLE_TRAIN_PER_CLASS == 2400
    assert len(rows["test.csv"]) == len(test) == 4 * agnews.SAMPLE_TEST_PER_CLASS == 600
    assert train["label"].value_counts().to_dict() == dict.fromkeys(range(4), agnews.SAMPLE_TRAIN_PER_CLASS)
    assert test["label"].value_counts().to_dict() == dict.fromkeys(range(4), agnews.SAMPLE_TEST_PER_CLASS)
    everything = rows["train.csv"] + rows["test.csv"]
    assert len(set(everything)) == len(everything), "a row appears twice"
    both = pd.concat([train, test])
    assert not both["text"].duplicated().any(), "two rows have the same text"
    assert all(row.startswith((b'"1","', b'"2","', b'"3","', b'"4","')) for row in everything)
    size = sum((agnews.SAMPLE_DIR / name).stat().st_size for name in rows)
    assert size < 800_000, f"the sample has grown to {size:,} bytes"


def test_locate_data_in_the_repository_finds_the_committed_sample(monkeypatch, tmp_path):
    monkeypatch.delenv(agnews.DATA_ENV_VAR, raising=False)
    monkeypatch.setattr(agnews, "DEFAULT_DATA_DIR", tmp_path / "nothing")
    found = locate_data()
    assert found.is_sample and found.train == agnews.REPO_ROOT / "data" / "ag_news_sample" / "train.csv"
    assert "data/ag_news_sample" in found.source


# --- the real test split (through $TFCOURSE_AG_NEWS_DIR) ------------------------------------------


def test_real_test_split_is_the_official_one():
    path = real_test_split()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == TEST.sha256
    frame = read_ag_news(path)
    assert len(frame) == 7600
    assert frame["label"].value_counts().to_dict() == dict.fromkeys(range(4), 1900)
    assert locate_test_split(path.parent) == path
    first, rest = stratified_split(frame, agnews.BENCHMARK_TRAIN_PER_CLASS)
    assert len(first) == 6000 and len(rest) == 1600
    assert rest["label"].value_counts().to_dict() == dict.fromkeys(range(4), 400)


def test_real_cleaning_leaves_no_artefact_and_keeps_every_row():
    path = real_test_split()
    raw = read_ag_news(path, clean=False)
    before = count_artefacts(raw["text"]).set_index("artefact")["occurrences"]
    assert (before > 0).all(), before  # each artefact the cleaner handles occurs in the real data
    text = "\n".join(raw["text"])
    for artefact, example, _ in CLEANING_EXAMPLES:
        assert example in text, f"the {artefact} example is not from the real test split"
    cleaned = read_ag_news(path)
    after = count_artefacts(cleaned["text"]).set_index("artefact")["occurrences"]
    assert after.sum() == 0, after
    joined = "\n".join(cleaned["text"])
    assert "\\" not in joined and " #39;" not in joined and "quot;" not in joined and joined.isascii()
    assert (cleaned["text"].str.len() > 0).all()


def test_committed_sample_is_exactly_the_documented_subset_of_the_real_test_split(tmp_path):
    path = real_test_split()
    source_lines = path.read_bytes().splitlines()
    position = {line: number for number, line in enumerate(source_lines)}
    rows = sample_rows()
    assert all(row in position for row in rows["train.csv"] + rows["test.csv"]), "a sample row is not in test.csv"
    remade = write_sample(path, tmp_path / "remade")
    for made, name in zip(remade, ("train.csv", "test.csv"), strict=True):
        assert made.read_bytes() == (agnews.SAMPLE_DIR / name).read_bytes(), f"{name} is not what write_sample makes"
    # Inside the benchmark's training part: never in its 1,600 evaluation rows.
    _, evaluation = stratified_split(read_ag_news(path, clean=False), agnews.BENCHMARK_TRAIN_PER_CLASS)
    sample_text = set(pd.concat([read_ag_news(agnews.SAMPLE_DIR / n, clean=False) for n in rows])["text"])
    assert not sample_text & set(evaluation["text"])
