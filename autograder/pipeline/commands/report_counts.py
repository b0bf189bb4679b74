"""Which notebooks the class report covers, and how each student counts there: one rule for every chart and table.

A notebook is reported once someone has handed it in and ``grade`` has graded it; in a reported notebook every
student of the class (everyone with a grader's result) is in exactly one state: *handed in* (counted with the
points awarded), *missing* (due, nothing handed in: 0 points, every test failed), *not yet handed in* or *not
graded yet* (not counted). The rule as the instructor reads it: docs/instructors.md (report). The histogram, the
failure heatmap, the failure table and the status table all count the same students, so a notebook's number of
students is one number everywhere on the page.
"""

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

import pandas as pd

from autograder.course.course import Course
from autograder.pipeline.storage.results import Status, SubmissionResult

NOT_YET = "not yet handed in"
NOT_GRADED = "not graded yet"
NOTHING_HANDED_IN = "nothing handed in"  # a missing student's message for every test
NO_RESULT = "no result for this test"
EVERY_TEST = "every test"  # the test column of a failure that is no one test's (missing, unreadable)


class Why(StrEnum):
    """Why a notebook is left out of the report (the page has one line per reason)."""

    NOT_DUE = "Not due yet"
    NO_DUE_DATE = "Nobody handed it in (no due date)"
    PAST_DUE = "Nobody handed it in by its due date"
    NOT_GRADED = "Handed in, not graded yet (run grade)"


@dataclass(frozen=True)
class LeftOut:
    assignment: str
    why: Why
    due: datetime | None


@dataclass(frozen=True)
class ClassCounts:
    """Who counts in each reported notebook, and the tests of those who count.

    ``students``: one row per (assignment, student) of the reported notebooks: ``state`` (a status,
    :data:`NOT_YET` or :data:`NOT_GRADED`), ``counted``, ``score`` (the awarded points; 0 without test
    results) and ``graded`` (the grader holds test results for it). ``tests``: one row per (assignment,
    student, test cell) of the counted students: ``failed``, the first line of the ``message``, and
    ``test``, the cell or :data:`EVERY_TEST` for a student without test results. ``out_of``: each
    notebook's points without extra credit, from its graded hand-ins (absent where there are none).
    """

    students: pd.DataFrame
    tests: pd.DataFrame
    out_of: dict[str, float]
    left_out: list[LeftOut]

    @property
    def assignments(self) -> list[str]:
        return list(dict.fromkeys(self.students["assignment"]))

    def rows_of(self, assignment: str) -> pd.DataFrame:
        return self.students[self.students["assignment"] == assignment]


def class_counts(course: Course, results: list[SubmissionResult], now: datetime) -> ClassCounts:
    """Apply the module's rule to the grader's ``results``, with the course's due dates, at time ``now`` (UTC)."""
    due = course.due_dates()
    by_key = {(r.assignment, r.student): r for r in results}
    everyone = sorted({r.student for r in results})
    handed_in = {r.assignment for r in results if r.status != Status.MISSING}
    reported = [a for a in course.assignments() if a in handed_in]
    left_out = [left_out_because(course, a, due.get(a), now) for a in course.assignments() if a not in handed_in]
    rows = []
    for assignment in reported:
        is_due = assignment not in due or due[assignment] <= now
        for student in everyone:
            result = by_key.get((assignment, student))
            state = Status.MISSING.value if result is None else str(result.status)
            if state == Status.MISSING and course.grading.submitted(student, assignment).is_dir():
                state = NOT_GRADED  # handed in after grade ran, or grade ran for others only
            elif state == Status.MISSING and not is_due:
                state = NOT_YET
            graded = result is not None and bool(result.tests)
            rows.append({"assignment": assignment, "student": student, "state": state,
                         "counted": state not in {NOT_YET, NOT_GRADED}, "score": result.score if graded else 0.0,
                         "graded": graded})
    students = pd.DataFrame(rows, columns=["assignment", "student", "state", "counted", "score", "graded"])
    out_of = {
        assignment: max(sum(t.max_score for t in r.tests if not t.extra_credit) for r in graded)
        for assignment in reported
        if (graded := [r for r in results if r.assignment == assignment and r.tests])
    }
    return ClassCounts(students, test_rows(students, by_key), out_of, left_out)


def left_out_because(course: Course, assignment: str, due: datetime | None, now: datetime) -> LeftOut:
    """Why nobody's work of ``assignment`` is in the report."""
    if any(folder.is_dir() for folder in course.grading.submitted().glob(f"*/{assignment}")):
        return LeftOut(assignment, Why.NOT_GRADED, due)
    if due is None:
        return LeftOut(assignment, Why.NO_DUE_DATE, due)
    return LeftOut(assignment, Why.NOT_DUE if due > now else Why.PAST_DUE, due)


def test_rows(students: pd.DataFrame, results: dict[tuple[str, str], SubmissionResult]) -> pd.DataFrame:
    """One row per (assignment, counted student, test cell): a student without the cell's result failed it."""
    rows = []
    for assignment, group in students[students["counted"]].groupby("assignment", sort=False):
        graded = [results[(assignment, s)] for s in group.loc[group["graded"], "student"]]
        cells = list(dict.fromkeys(t.grade_id for r in graded for t in r.tests))
        for student, state in zip(group["student"], group["state"], strict=True):
            result = results.get((assignment, student))
            own = {t.grade_id: t for t in result.tests} if result is not None else {}
            why = NOTHING_HANDED_IN if result is None or state == Status.MISSING else result.reason or state
            for cell in cells:
                found = own.get(cell)
                if found is not None:
                    failed, message = found.score < found.max_score, first_line(found.message)
                else:
                    failed, message = True, NO_RESULT if own else why
                rows.append({"assignment": assignment, "student": student, "cell": cell,
                             "test": cell if own else EVERY_TEST, "failed": failed, "message": message})
    return pd.DataFrame(rows, columns=["assignment", "student", "cell", "test", "failed", "message"])


def first_line(message: str) -> str:
    return message.splitlines()[0] if message else ""
