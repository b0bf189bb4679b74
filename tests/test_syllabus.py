"""The syllabus (`docs/syllabus.md` and `docs/syllabus.zh.md`) says what the notebooks say.

Its generated parts (points, hours, written questions, schedule) are what `book/syllabus.py`
writes from `solutions/`, and the check fails once a figure in a page is changed by hand; the
points agree with the notebooks' metadata counted here on their own; every written (manually
graded) question has a marking-guide entry with its points, and no entry names a question the
notebooks no longer have; the hours add up; the example `due_dates.csv` files are ones the grader
reads.
"""

import json
import math
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.course import settings
from autograder.course.deadlines import read_due_dates
from autograder.course.notebooks import grade_id, is_extra_credit, is_student_cell, nbgrader_meta
from book import syllabus

LANGUAGES = list(syllabus.PAGES)
GUIDE_ENTRY = {
    "en": re.compile(r"^#### Q(\d+) · `(\w+)` \((\d+) points?\)$", re.M),
    "zh": re.compile(r"^#### Q(\d+) · `(\w+)`（(\d+) 分）$", re.M),
}
GUIDE_PARTS = {
    "en": ("**A full answer**", "**Partial credit", "**Look for**"),
    "zh": ("**满分答案**", "**部分得分", "**留意**"),
}
CSV_BLOCK = re.compile(r"```csv\n(.*?)```", re.S)
NUMBER = re.compile(r"\d+(?:\.\d+)?")


@pytest.fixture(scope="module")
def notebooks() -> list[syllabus.Notebook]:
    return syllabus.course()


def page(language: str) -> str:
    return syllabus.PAGES[language].read_text()


def generated_part(text: str, name: str) -> str:
    return next(match["body"] for match in syllabus.GENERATED.finditer(text) if match["name"] == name)


def tables(markdown: str) -> list[list[list[str]]]:
    """Each Markdown table of ``markdown`` as rows of cells, the header first, the ``---`` row left out."""
    found = []
    for block in re.split(r"\n\s*\n", markdown):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
        if rows:
            found.append([row for row in rows if not all(set(cell) <= {"-"} for cell in row)])
    return found


def span(cell: str) -> tuple[float, float]:
    """``"11-22"`` -> (11, 22); ``"1"`` -> (1, 1); ``"**1.5-3.5 h**"`` -> (1.5, 3.5)."""
    numbers = [float(n) for n in NUMBER.findall(cell)]
    return (numbers[0], numbers[-1])


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_generated_parts_are_what_the_notebooks_say(language: str, notebooks: list[syllabus.Notebook]):
    stale = syllabus.differences(page(language), notebooks, language)
    assert not stale, f"{syllabus.PAGES[language].name}: {stale} out of date: run `make syllabus`"


def test_the_check_fails_when_a_point_value_in_a_page_is_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pages = {language: tmp_path / path.name for language, path in syllabus.PAGES.items()}
    for language, path in syllabus.PAGES.items():
        shutil.copy(path, pages[language])
    monkeypatch.setattr(syllabus, "PAGES", pages)
    assert syllabus.main(["--check"]) == 0

    text = pages["en"].read_text()
    row = re.search(r"^\| `01_attention` [^|]*\| (\d+) \|", text, re.M)
    changed = text[: row.start(1)] + str(int(row[1]) + 1) + text[row.end(1) :]
    pages["en"].write_text(changed)
    assert syllabus.main(["--check"]) == 1
    assert syllabus.differences(changed, syllabus.course(), "en") == ["points"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_points_are_the_notebooks_graded_cells(language: str):
    """Counted here from nbgrader's metadata: full marks leave out extra credit, which has its own column."""
    rows = {row[0].split()[0].strip("`"): row for row in tables(generated_part(page(language), "points"))[0][1:]}
    for assignment in settings.assignment_ids():
        cells = nbformat.read(settings.source_notebook(assignment), as_version=4).cells
        graded = [cell for cell in cells if nbgrader_meta(cell).get("grade")]
        full = sum(nbgrader_meta(c)["points"] for c in graded if not is_extra_credit(grade_id(c)))
        extra = sum(nbgrader_meta(c)["points"] for c in graded if is_extra_credit(grade_id(c)))
        written = sum(nbgrader_meta(c)["points"] for c in graded if is_student_cell(c))
        autograded, by_hand, extra_cell, full_cell = (float(cell) for cell in rows[assignment][1:5])
        assert (autograded + by_hand, by_hand, extra_cell, full_cell) == (full, written, extra, full), assignment


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_written_question_has_a_marking_guide_entry(language: str):
    text = page(language)
    questions = []  # (number, grade id, points), in course order
    for assignment in settings.assignment_ids():
        cells = nbformat.read(settings.source_notebook(assignment), as_version=4).cells
        questions += [
            (syllabus.question_number(cells, index), grade_id(cell), nbgrader_meta(cell)["points"])
            for index, cell in enumerate(cells)
            if nbgrader_meta(cell).get("grade") and is_student_cell(cell)
        ]
    entries = [(int(number), gid, float(points)) for number, gid, points in GUIDE_ENTRY[language].findall(text)]
    missing = sorted({q[1] for q in questions} - {e[1] for e in entries})
    stale = sorted({e[1] for e in entries} - {q[1] for q in questions})
    assert not missing and not stale, f"no guide entry for {missing}; entries for no question: {stale}"
    assert entries == questions, "each entry's question number and points, in course order"
    bodies = re.split(r"^#{1,4} ", text[GUIDE_ENTRY[language].search(text).start() :], flags=re.M)[1:]
    for body in bodies:
        if GUIDE_ENTRY[language].match("#### " + body.splitlines()[0]):
            absent = [part for part in GUIDE_PARTS[language] if part not in body]
            assert not absent, f"{body.splitlines()[0]}: no {absent}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_hours_add_up(language: str):
    words = syllabus.labels(language)
    hours_tables = tables(generated_part(page(language), "hours"))
    estimate = next(t for t in hours_tables if words["hours"] in t[0])
    hours_column = estimate[0].index(words["hours"])
    *notebooks, course = estimate[1:]
    assert len(notebooks) == len(settings.assignment_ids()) and course[0] == f"**{words['course']}**"
    by_notebook = {}
    for row in notebooks:
        parts = [span(cell) for cell in row[1:hours_column]]
        low, high = sum(p[0] for p in parts), sum(p[1] for p in parts)
        expected = (math.floor(low / 30) / 2, math.ceil(high / 30) / 2)
        assert span(row[hours_column]) == expected, f"{row[0]}: the parts give {expected} h"
        by_notebook[row[0]] = expected
    total = tuple(sum(hours[end] for hours in by_notebook.values()) for end in (0, 1))
    assert span(course[hours_column]) == total
    for schedule in tables(generated_part(page(language), "schedule")):
        for week in schedule[1:]:
            chosen = [by_notebook[name.strip()] for name in week[1].split(",")]
            assert span(week[2]) == tuple(sum(hours[end] for hours in chosen) for end in (0, 1)), week


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_example_due_dates_are_read_by_the_grader(language: str, tmp_path: Path):
    blocks = CSV_BLOCK.findall(generated_part(page(language), "schedule"))
    assert len(blocks) == len(json.loads(syllabus.PLANS_FILE.read_text()))
    assignments = settings.assignment_ids()
    for block in blocks:
        (tmp_path / "due_dates.csv").write_text(block)
        due = read_due_dates(tmp_path, assignments)
        assert list(due) == assignments, "every notebook has a due date"
        assert [due[a] for a in assignments] == sorted(due.values()), "due in course order"
