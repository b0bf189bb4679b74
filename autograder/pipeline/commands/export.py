"""``export``: one CSV row per student and assignment, with a status and every test's result.

Where nbgrader's own export shows a missing notebook, an unreadable one and a real zero all as 0.0, the
``status`` and ``reason`` columns say which, and each test has its points and a ``why``; lateness (nbgrader's
penalty left at zero), extra credit, the feedback's state, the files taken, the similarity report's closest
match and the refusals still open have columns of their own, and written answers not graded yet are never
a silent total. What each column holds: docs/instructors.md (export) and docs/running-a-class.md (refused
hand-ins). ``--format NAME`` writes what an LMS imports instead (:mod:`autograder.lms`); every file goes
through :func:`~autograder.pipeline.commands.csv_cells.write_csv`.
"""

from pathlib import Path

import pandas as pd
from nbgrader.api import Gradebook, MissingEntry

from autograder.course.course import Course
from autograder.course.deadlines import late_text, seconds_late, submitted_at
from autograder.course.extensions import due_for, read_extensions
from autograder.course.paths import sqlite_url
from autograder.pipeline.commands.csv_cells import write_csv
from autograder.pipeline.commands.feedback import feedback_state, load_releases
from autograder.pipeline.storage.refusals import REFUSED_FILE, Refusal, refusals_by_submission
from autograder.pipeline.storage.results import Status, SubmissionResult, load_results
from autograder.similarity.compare import closest_matches, reference_closeness

REFUSALS_SHOWN = 3  # the refused column's reasons, newest first
REASON_CHARACTERS = 200


def manual_grades(db_path: Path, result: SubmissionResult) -> dict[str, tuple[float | None, float]]:
    """``{"notebook:grade_id": (manual score or None, max score)}`` of the cells graded by hand (the written
    answers, and any test cell given a manual score): None while a written answer is not graded yet."""
    if not db_path.exists():
        return {}
    with Gradebook(sqlite_url(db_path)) as gb:
        try:
            submission = gb.find_submission(result.assignment, result.student)
        except MissingEntry:
            return {}
        grades = {f"{notebook.name}:{grade.name}": grade
                  for notebook in submission.notebooks for grade in notebook.grades}
        return {
            cell: (None if grade.manual_score is None else float(grade.manual_score), float(grade.max_score))
            for cell, grade in grades.items()
            if grade.manual_score is not None or grade.cell.cell_type != "code"  # a written answer (markdown)
        }


def export_frame(course: Course) -> pd.DataFrame:
    """The grades of every graded submission (rows sorted by assignment, then student)."""
    db_path = course.grading.gradebook
    releases, due_dates = load_releases(course), course.due_dates()
    extensions = read_extensions(course.root, course.assignments(), due_dates)
    closest = closest_matches(course)  # empty unless `similarity` has run
    published = reference_closeness(course)  # the same
    rows = []
    for result in load_results(course):
        submitted = submitted_at(course.grading.submitted(result.student, result.assignment))
        due = due_for(result.student, result.assignment, due_dates, extensions)
        row: dict[str, object] = {
            "assignment": result.assignment,
            "student": result.student,
            "status": str(result.status),
            "reason": result.reason,
            "flags": " | ".join(result.flags),
            "repairs": " | ".join(result.repairs),
            "files": " | ".join(result.files),
            "feedback": feedback_state(result, releases, course),
            "submitted": submitted.isoformat(timespec="seconds") if submitted else "",
            "due": due.isoformat(timespec="seconds") if due else "",
            "late by": late_text(seconds_late(submitted, due)),
            "seconds late": seconds_late(submitted, due),
            "autograded_score": result.score,
            "autograded_max": sum(test.max_score for test in result.tests if not test.extra_credit),
            "extra_credit": sum(test.score for test in result.tests if test.extra_credit),
        }
        scores = {f"{test.notebook}:{test.grade_id}": test.score for test in result.tests}
        readable = result.status not in (Status.MISSING, Status.UNREADABLE)  # a written answer one can grade
        manual = manual_grades(db_path, result) if readable else {}
        # A manual score replaces the autograded one of the same cell, as in nbgrader's own gradebook.
        scores.update({cell: score for cell, (score, _) in manual.items() if score is not None})
        pending = {cell: most for cell, (score, most) in manual.items() if score is None}
        totals: dict[str, float] = {}
        for cell, score in scores.items():
            row[cell] = score
            notebook = cell.split(":")[0]
            totals[notebook] = totals.get(notebook, 0.0) + score
        for notebook, total in totals.items():
            row[f"{notebook} total"] = total
        row["total"] = sum(totals.values())
        row["points pending"] = sum(pending.values())
        row["written pending"] = " | ".join(sorted(pending))
        lost = "not submitted" if result.status == Status.MISSING else "failed"
        for test in result.tests:  # why each test lost points: its failure, its time limit, the clean re-run
            if test.score < test.max_score:
                row[f"{test.notebook}:{test.grade_id} why"] = test.message or lost
        row["seconds"] = round(result.seconds, 1)
        if closest:
            match = closest.get((result.assignment, result.student), {})
            row["closest match"] = match.get("match", "")
            row["closest match score"] = match.get("score")
            row["closest match z"] = match.get("z")
            against = published.get((result.assignment, result.student), {})
            row["reference score"] = against.get("score")
            row["reference z"] = against.get("z")
        rows.append(row)
    add_refusals(rows, refusals_by_submission(course.grading.path))
    frame = pd.DataFrame(rows)
    return frame.sort_values(["assignment", "student"]).reset_index(drop=True) if rows else frame


def refusal_text(refusals: list[Refusal]) -> str:
    """The newest few refusals, each reason cut short, and how many more: a flood of refusals stays one short cell."""
    newest = refusals[-REFUSALS_SHOWN:]
    shown = [f"{refusal.seen}: {shortened(refusal.reason)}" for refusal in reversed(newest)]
    if len(refusals) > len(newest):
        shown.append(f"and {len(refusals) - len(newest)} more (grading/{REFUSED_FILE})")
    return " | ".join(shown)


def shortened(text: str, limit: int = REASON_CHARACTERS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def add_refusals(rows: list[dict[str, object]], refused: dict[tuple[str, str], list[Refusal]]) -> None:
    """The ``refused`` column, and a ``missing`` row for each student none of whose hand-ins was taken."""
    if not refused:
        return
    graded = set()
    for row in rows:
        key = (str(row["assignment"]), str(row["student"]))
        graded.add(key)
        row["refused"] = refusal_text(refused.get(key, []))
    for (assignment, student), refusals in sorted(refused.items()):
        if (assignment, student) not in graded:
            reason = f"every hand-in was refused ({len(refusals)}): see the refused column"
            rows.append({"assignment": assignment, "student": student, "status": str(Status.MISSING),
                         "reason": reason, "refused": refusal_text(refusals)})


def export_csv(course: Course, path: Path) -> pd.DataFrame:
    frame = export_frame(course)
    write_csv(frame, path)
    return frame
