"""The class report: notebooks nobody was due to hand in left out, one way of counting, alt text on every chart.

No kernel runs: the grader's results are written as ``grade`` writes them (a ``missing`` result for
every student of every notebook graded), into a course folder that holds only what the report reads.
"""

from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder.course.course import Course
from autograder.course.deadlines import DUE_DATES_FILE
from autograder.course.settings import SOURCE_DIRECTORY
from autograder.pipeline.commands.report import write_report
from autograder.pipeline.storage.results import Status, SubmissionResult, save_result
from autograder.pipeline.storage.results import TestResult as CellResult  # (a Test* name would be collected by pytest)

NOW = datetime(2026, 12, 10, 12, 0, tzinfo=UTC)
STUDENTS = [f"s{i:02d}" for i in range(10)]
POINTS = {"t1": 2.0, "t2": 2.0, "t3": 4.0, "extra_credit_t4": 1.0}  # 8 points, and 1 of extra credit
# 01_due: who passes which test; s08's notebook is unreadable, s09 handed in nothing.
PASSES = {
    "s00": {"t1", "t2", "t3", "extra_credit_t4"},  # 9 points
    "s01": {"t1", "t2", "t3"},  # 8
    "s02": {"t3"},  # 4
    "s03": {"t1", "t2"},  # 4
    "s04": {"t2", "t3"},  # 6
    "s05": set(),  # 0
    "s06": {"t1", "t3"},  # 6
    "s07": {"t1", "t2", "t3"},  # 8, flagged
}
DUE = {  # notebook -> due date (None: no due date)
    "01_due": NOW - timedelta(days=3),
    "02_not_due": NOW + timedelta(days=7),
    "03_no_date": None,
    "04_early": NOW + timedelta(days=14),  # two students handed in early
    "05_past_nobody": NOW - timedelta(days=1),
    "06_only_unreadable": None,
    "07_ungraded": None,  # handed in, never graded
}


def graded(assignment: str, student: str, passes: set[str], status: Status = Status.GRADED) -> SubmissionResult:
    tests = [CellResult(assignment, cell, points, score=points if cell in passes else 0.0,
                        message="" if cell in passes else f"AssertionError: {cell} is wrong\ndetails")
             for cell, points in POINTS.items()]
    flags = ["patches torch.allclose"] if status == Status.FLAGGED else []
    return SubmissionResult(assignment, student, status, tests=tests, flags=flags)


def missing(assignment: str, student: str) -> SubmissionResult:
    return SubmissionResult(assignment, student, Status.MISSING, "nothing submitted")


def unreadable(assignment: str, student: str) -> SubmissionResult:
    return SubmissionResult(assignment, student, Status.UNREADABLE, "unreadable: not valid JSON")


def make_course(root: Path) -> Course:
    for assignment in DUE:
        folder = root / SOURCE_DIRECTORY / assignment
        folder.mkdir(parents=True)
        (folder / f"{assignment}.ipynb").write_text("{}")
    rows = "".join(f"{a},{'' if d is None else d.isoformat()}\n" for a, d in DUE.items())
    (root / DUE_DATES_FILE).write_text("assignment,due\n" + rows)
    course = Course(root)
    results = [graded("01_due", s, p, Status.FLAGGED if s == "s07" else Status.GRADED) for s, p in PASSES.items()]
    results += [unreadable("01_due", "s08"), missing("01_due", "s09")]
    results += [graded("04_early", s, set(POINTS)) for s in STUDENTS[:2]]
    results += [missing("04_early", s) for s in STUDENTS[2:]]
    results += [missing(a, s) for a in ("02_not_due", "03_no_date", "05_past_nobody") for s in STUDENTS]
    results += [unreadable("06_only_unreadable", "s00")] + [missing("06_only_unreadable", s) for s in STUDENTS[1:]]
    for result in results:
        save_result(course, result)
    for student, assignment in (("s02", "04_early"), ("s00", "07_ungraded")):  # handed in after grade ran
        course.grading.submitted(student, assignment).mkdir(parents=True)
    return course


class Page(HTMLParser):
    """The images' alt texts, and each table's rows (cells as text)."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.alts: list[str | None] = []
        self.tables: list[list[list[str]]] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.alts.append(dict(attrs).get("alt"))
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in {"td", "th"}:
            self.tables[-1][-1].append("")

    def handle_data(self, data: str) -> None:
        if self.tables and self.tables[-1] and self.tables[-1][-1]:
            self.tables[-1][-1][-1] += data.strip()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("course")
    return write_report(make_course(root), root / "report.html", now=NOW).read_text()


def status_counts(page: str) -> dict[tuple[str, str], str]:
    """``{(notebook, column): cell}`` of the status table (pandas' ``to_html`` of a crosstab)."""
    header, *rows = next(t for t in Page(page).tables if t and t[0] and t[0][0] == "state")
    return {(row[0], column): cell for row in rows[1:] for column, cell in zip(header[1:], row[1:], strict=True)}


def test_notebooks_nobody_was_due_to_hand_in_are_left_out_with_one_line_each(page: str) -> None:
    for assignment in ("02_not_due", "03_no_date", "05_past_nobody", "07_ungraded"):
        assert page.count(assignment) == 1, assignment  # in its left-out line only: no row, chart or name list
    assert f"Not due yet, not in this report: 02_not_due (due {DUE['02_not_due']:%Y-%m-%d %H:%M} UTC)." in page
    assert "Nobody handed it in (no due date), not in this report: 03_no_date." in page
    assert "Nobody handed it in by its due date, not in this report: 05_past_nobody" in page
    assert "Handed in, not graded yet (run grade), not in this report: 07_ungraded." in page
    assert page.count("nothing submitted") == 0  # no wall of missing rows
    assert page.count("<tr>") < 60  # 10 students, 3 reported notebooks


def test_a_missing_student_is_counted_the_same_in_every_chart_and_table(page: str) -> None:
    table = status_counts(page)
    assert table["01_due", "counted"] == "10" and table["01_due", "missing"] == "1"
    assert table["04_early", "counted"] == "2" and table["04_early", "not yet handed in"] == "7"
    assert table["04_early", "not graded yet"] == "1"  # s02 handed in after grade ran: to look at, not counted
    assert "<tr><td>s02</td><td>04_early</td><td>not graded yet</td><td>handed in after the last grade run" in page
    histogram, heatmap = (alt for alt in Page(page).alts if alt and alt.startswith(("Histogram of 01", "Heatmap")))
    assert "for 10 students (1 missing, counted as 0 points)" in histogram
    assert "01_due: 10 students" in heatmap and "04_early: 2 students" in heatmap
    # the failure table counts the missing and the unreadable student among the same 10, once each
    assert "<td>01_due</td><td>1 of 10</td><td><em>every test</em></td><td>nothing handed in</td>" in page
    assert "<td>01_due</td><td>5 of 10</td><td><code>t1</code></td>" not in page  # t1 message: 3 of 10 graded
    assert "<td>01_due</td><td>3 of 10</td><td><code>t1</code></td><td>AssertionError: t1 is wrong</td>" in page
    assert "How students are counted" in page and "<h2>Missing (counted as 0 points)</h2>" in page
    assert "<p>01_due (1 student): s09</p>" in page


def test_every_image_has_alt_text_that_states_its_numbers(page: str) -> None:
    alts = Page(page).alts
    assert len(alts) == 3 and all(alts)  # 01 and 04 histograms, one heatmap; 06 has no graded hand-in
    assert alts[0] == (
        "Histogram of 01_due's autograded scores out of 8 for 10 students (1 missing, counted as 0 points): "
        "median 5, 3 below half marks (4), 3 with full marks."
    )
    assert alts[1].startswith(
        "Histogram of 04_early's autograded scores out of 8 for 2 students (0 missing, counted as 0 "
        "points; 8 not counted, not yet handed in or not graded yet): median 9,"
    )
    assert alts[2].endswith(
        "Most failed: 01_due extra_credit_t4 90% (9 of 10), 01_due t1 50% (5 of 10), 01_due t2 50% (5 of 10)."
    )


def test_no_chart_for_a_notebook_without_graded_hand_ins(page: str) -> None:
    assert "(of 0)" not in page and "out of 0" not in page
    assert "06_only_unreadable: no chart, 0 graded hand-ins." in page
