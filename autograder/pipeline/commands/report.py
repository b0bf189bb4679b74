"""``report``: the class at a glance, as one self-contained HTML page (figures inlined as PNG, with alt text).

Who is counted where is decided once, in :mod:`autograder.pipeline.commands.report_counts`; the charts and
their descriptions are drawn in :mod:`autograder.pipeline.commands.report_charts`. This module lays out the page.
"""

import html
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from autograder.course.course import Course
from autograder.pipeline.commands.report_charts import failure_heatmap, image_html, score_histogram, students
from autograder.pipeline.commands.report_counts import EVERY_TEST, NOT_GRADED, NOT_YET, ClassCounts, Why, class_counts
from autograder.pipeline.storage.results import Status, SubmissionResult, load_results

STYLE = (
    "body{font-family:sans-serif;margin:2em} table{border-collapse:collapse} "
    "td,th{border:1px solid #ccc;padding:4px 8px}"
)
RULE = (
    "<p>How students are counted: a notebook is reported once someone has handed it in. In a reported notebook, "
    "a student who handed in nothing counts as <em>missing</em>, with 0 points and every test failed, once the "
    "notebook is due (its due date has passed, or it has none); before its due date they are <em>not yet handed "
    "in</em> and not counted. A hand-in that <code>grade</code> has not graded yet is not counted either (it is "
    "listed to look at). Every chart and table below counts the same students per notebook.</p>"
)
STATES = [*(str(status) for status in Status), NOT_YET, NOT_GRADED]  # the status table's column order
NOT_GRADED_WHY = "handed in after the last grade run: run grade"
TO_LOOK_AT = {Status.FLAGGED, Status.UNREADABLE, Status.TIMED_OUT, Status.CRASHED, NOT_GRADED}


def left_out_lines(counts: ClassCounts) -> list[str]:
    """One line per reason a notebook is left out, naming the notebooks (and due dates) it applies to."""
    lines = []
    for why in Why:
        named = [f"{html.escape(n.assignment)}" + (f" (due {n.due:%Y-%m-%d %H:%M} UTC)" if n.due else "")
                 for n in counts.left_out if n.why == why]
        if named:
            lines.append(f"<p class='left-out'>{why}, not in this report: {', '.join(named)}.</p>")
    return lines


def status_table(counts: ClassCounts) -> str:
    """Per notebook, how many students are in each state, and how many are counted."""
    table = pd.crosstab(counts.students["assignment"], counts.students["state"])
    table = table[[state for state in STATES if state in table.columns]]
    table["counted"] = counts.students.groupby("assignment")["counted"].sum()
    return table.to_html()


def score_section(counts: ClassCounts) -> list[str]:
    parts = ["<h2>Autograded scores</h2>"]
    for assignment in counts.assignments:
        if assignment in counts.out_of:
            chart = score_histogram(assignment, counts.rows_of(assignment), counts.out_of[assignment])
            parts.append(image_html(chart))
        else:
            parts.append(f"<p>{html.escape(assignment)}: no chart, 0 graded hand-ins.</p>")
    return parts


def failure_table(counts: ClassCounts, top: int) -> str:
    """The ``top`` commonest (test, message) failures; a student without test results is one row, not one per test."""
    failed = counts.tests[counts.tests["failed"]].drop_duplicates(["assignment", "student", "test", "message"])
    common = failed.groupby(["assignment", "test", "message"], sort=False).size()
    common = common.sort_values(ascending=False, kind="stable")
    sizes = counts.tests.groupby("assignment")["student"].nunique()
    rows = "".join(f"<tr><td>{html.escape(a)}</td><td>{count} of {sizes[a]}</td>"
                   f"<td>{'<em>every test</em>' if test == EVERY_TEST else f'<code>{html.escape(test)}</code>'}</td>"
                   f"<td>{html.escape(message)}</td></tr>"
                   for (a, test, message), count in common.head(top).items())
    return f"<table><tr><th>notebook</th><th>students</th><th>test</th><th>message</th></tr>{rows}</table>"


def missing_lines(counts: ClassCounts) -> list[str]:
    rows = counts.students[counts.students["state"] == Status.MISSING]
    return [f"<p>{html.escape(a)} ({students(len(group))}): {html.escape(', '.join(group['student']))}</p>"
            for a, group in rows.groupby("assignment", sort=False)]


def look_at_table(counts: ClassCounts, results: list[SubmissionResult]) -> str:
    """The submissions that need the instructor's eye: flagged, not cleanly graded, or not graded yet."""
    by_key = {(r.assignment, r.student): r for r in results}
    rows = []
    for assignment, student, state in zip(counts.students["assignment"], counts.students["student"],
                                          counts.students["state"], strict=True):
        result = by_key.get((assignment, student))
        flags = result.flags if result is not None else []
        if state in TO_LOOK_AT or flags:
            reason = NOT_GRADED_WHY if state == NOT_GRADED or result is None else result.reason
            why = "<br>".join(html.escape(line) for line in [reason, *flags[:10]] if line)
            rows.append(f"<tr><td>{html.escape(student)}</td><td>{html.escape(assignment)}</td>"
                        f"<td>{html.escape(state)}</td><td>{why}</td></tr>")
    if not rows:
        return ""
    header = "<tr><th>student</th><th>notebook</th><th>status</th><th>why</th></tr>"
    return f"<h2>Submissions to look at</h2><table>{header}{''.join(rows)}</table>"


def write_report(course: Course, output: Path, top: int = 15, now: datetime | None = None) -> Path:
    """The report of the grader's results as they are at ``now`` (default: the current time)."""
    results = load_results(course)
    counts = class_counts(course, results, now or datetime.now(UTC))
    parts = [f"<html><head><meta charset='utf-8'><title>Class report</title><style>{STYLE}</style></head><body>",
             "<h1>Class report</h1>", RULE, *left_out_lines(counts)]
    if counts.students.empty:
        parts.append("<p>Nobody has handed in a graded notebook yet.</p>")
    else:
        parts += ["<h2>Students by status</h2>", status_table(counts), *score_section(counts)]
    if not counts.tests.empty:
        parts += ["<h2>Which tests fail</h2>", image_html(failure_heatmap(counts.tests)),
                  "<h2>Most common failure messages</h2>", failure_table(counts, top)]
    missing = missing_lines(counts)
    if missing:
        parts += ["<h2>Missing (counted as 0 points)</h2>", *missing]
    parts.append(look_at_table(counts, results))
    parts.append("</body></html>")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(parts), encoding="utf-8")
    return output
