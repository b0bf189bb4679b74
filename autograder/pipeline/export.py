"""``export``: one CSV row per student and assignment, with a status and every test's result.

nbgrader's own export shows a missing notebook, an unreadable one and a real zero all as
0.0; here the ``status`` and ``reason`` columns say which, the per-test columns say where
the points went (and a ``<notebook>:<test> why`` column, why a test lost its points: its
failure, the time limit it ran into, the clean re-run's verdict), and the written answers'
manual scores come from the gradebook. The
``submitted``, ``due`` and ``late by`` columns say when nbgrader received the submission (its
``timestamp.txt``: the server's time, which collect writes), the student's own due date (``due_dates.csv``,
or their row of ``extensions.csv``)
and how late it was (``seconds late`` for sorting); nbgrader's late-submission penalty is left at
zero: lateness is marked, and the instructor decides. The
``extra_credit`` column holds the points of the optional exercises' tests (grade ids
``extra_credit_*``), which count in the totals and in no maximum: ``autograded_max`` and the LMS
files' points possible leave them out, so a student can pass full marks. The
``feedback`` column says whether the student's feedback is ``written``, ``held (flagged)``
until the instructor releases it, ``released``, not written yet (``none``), or not to be written
as nothing was handed in (``missing``). The ``files`` column names a notebook taken under a
copy's name (``01_attention (1).ipynb``) and the notebook files ``grade`` ignored. Once
``similarity`` has run, ``closest match``, ``closest match score`` and ``closest match z`` name
the student whose submission of the notebook lies furthest above the class's pairs (by z-score), and
``reference score`` and ``reference z`` how close the submission lies to the published reference answers,
measured the same way.
Once collect has refused a hand-in (a link, another account's files, over the limits: see
:mod:`autograder.pipeline.exchange_collect`), a ``refused`` column lists each refusal still open
(none superseded by a hand-in taken since) with its time and reason (the newest three, each cut at
200 characters, and how many more), and a student whose every hand-in was refused gets a row of
status ``missing`` that says so.

``--format canvas`` and ``--format moodle`` write what each LMS imports instead, one total per
student and assignment (autograded and manual scores), with the identifiers ``collect`` read
from the download's names (``grading/lms_students.json``):

- Canvas, *Grades → Import*: columns ``Student, ID, SIS User ID, SIS Login ID, Section``, then one
  column per assignment, and a ``Points Possible`` row. Canvas matches a student by ``ID`` (the
  user id of the download's file names) and an assignment column by its title (or by
  ``Title (assignment id)``).
- Moodle, the assignment's *Upload grading worksheet* (feedback type *Offline grading worksheet*):
  one file per assignment, ``<output>-<assignment>.csv``, with the columns ``Identifier``
  (``Participant <id>``, the download's participant id), ``Full name``, ``Grade``, ``Maximum Grade``
  and ``Last modified (grade)`` (the export's time: Moodle skips a row whose grade changed in Moodle
  after it, unless told to ignore that).

A missing submission leaves its cell empty (the LMS changes nothing there); a student without
an LMS identifier (named by ``--pattern`` or a plain folder) is left out and listed.

Every file is written by :func:`autograder.pipeline.csv_cells.write_csv`: a text cell that a
spreadsheet would run as a formula (``=HYPERLINK(...)`` as a student's exception's name) gets a
``'`` before it.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from nbgrader.api import Gradebook, MissingEntry

from autograder.course.course import Course
from autograder.course.deadlines import late_text, seconds_late, submitted_at
from autograder.course.extensions import due_for, read_extensions
from autograder.course.notebooks import is_extra_credit
from autograder.course.paths import sqlite_url
from autograder.pipeline.collect import CANVAS, MOODLE, load_lms_students
from autograder.pipeline.csv_cells import write_csv
from autograder.pipeline.feedback import feedback_state, load_releases
from autograder.pipeline.gradebook import grade_cells
from autograder.pipeline.refusals import REFUSED_FILE, Refusal, refusals_by_submission
from autograder.pipeline.results import Status, SubmissionResult, load_results
from autograder.similarity.compare import closest_matches, reference_closeness

CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_POINTS_ROW = "Points Possible"
MOODLE_COLUMNS = ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)"]
MOODLE_IDENTIFIER = "Participant {}"  # as Moodle's grading worksheet writes it
REFUSALS_SHOWN = 3  # the refused column's reasons, newest first
REASON_CHARACTERS = 200


def manual_scores(db_path: Path, result: SubmissionResult) -> dict[str, float]:
    """``{"notebook:grade_id": manual score}`` for the cells graded by hand so far."""
    if not db_path.exists():
        return {}
    with Gradebook(sqlite_url(db_path)) as gb:
        try:
            submission = gb.find_submission(result.assignment, result.student)
        except MissingEntry:
            return {}
        return {
            f"{notebook.name}:{grade.name}": float(grade.manual_score)
            for notebook in submission.notebooks
            for grade in notebook.grades
            if grade.manual_score is not None
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
        # A manual score replaces the autograded one of the same cell, as in nbgrader's own gradebook.
        scores.update(manual_scores(db_path, result))
        totals: dict[str, float] = {}
        for cell, score in scores.items():
            row[cell] = score
            notebook = cell.split(":")[0]
            totals[notebook] = totals.get(notebook, 0.0) + score
        for notebook, total in totals.items():
            row[f"{notebook} total"] = total
        row["total"] = sum(totals.values())
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
                         "reason": reason, "refused": refusal_text(refusals)})  # fmt: skip


def export_csv(course: Course, path: Path) -> pd.DataFrame:
    frame = export_frame(course)
    write_csv(frame, path)
    return frame


@dataclass
class LmsExport:
    """What an LMS export wrote, and what the instructor should know before importing it."""

    files: list[Path] = field(default_factory=list)
    students: int = 0  # rows of students written (per file, for Moodle)
    left_out: list[str] = field(default_factory=list)  # graded students without an identifier of this LMS
    to_check: list[str] = field(default_factory=list)  # "student/assignment: status" of totals not graded cleanly


def submission_totals(frame: pd.DataFrame) -> dict[tuple[str, str], float]:
    """``{(assignment, student): total}`` of every submission handed in (a missing one has no total)."""
    handed_in = frame[frame["status"] != str(Status.MISSING)] if len(frame) else frame
    return {(row.assignment, row.student): float(row.total) for row in handed_in.itertuples()}


def points_possible(course: Course, assignment: str) -> float:
    """Full marks of an assignment: every graded cell, tests and written answers, but no extra credit."""
    cells = grade_cells(course.grading.gradebook, assignment)
    return sum(cell.max_score for cell in cells if not is_extra_credit(cell.grade_id))


def score_text(score: float | None) -> str:
    return "" if score is None else f"{score:g}"


def lms_students_of(students: dict[str, dict], lms: str) -> dict[str, dict]:
    return {student: entry for student, entry in students.items() if entry["lms"] == lms}


def checks(frame: pd.DataFrame) -> list[str]:
    unclean = frame[~frame["status"].isin([str(Status.GRADED), str(Status.MISSING)])] if len(frame) else frame
    return [f"{row.student}/{row.assignment}: {row.status}" for row in unclean.itertuples()]


def export_canvas(course: Course, path: Path) -> LmsExport:
    """The CSV Canvas's gradebook imports: a column per assignment handed in, a row per Canvas student."""
    frame = export_frame(course)
    totals = submission_totals(frame)
    assignments = sorted({assignment for assignment, _ in totals})
    canvas = {s: e for s, e in lms_students_of(load_lms_students(course), CANVAS).items()
              if any(e["ids"].values())}  # fmt: skip
    rows = [{"Student": CANVAS_POINTS_ROW} | {a: score_text(points_possible(course, a))
                                              for a in assignments}]  # fmt: skip
    for student, entry in sorted(canvas.items()):
        user_id = next(i for i in entry["ids"].values() if i)
        scores = {a: score_text(totals.get((a, student))) for a in assignments}
        rows.append({"Student": entry["name"], "ID": user_id, "SIS User ID": "", "SIS Login ID": "", "Section": ""}
                    | scores)  # fmt: skip
    write_csv(pd.DataFrame(rows, columns=CANVAS_STUDENT_COLUMNS + assignments, dtype=object).fillna(""), path)
    left_out = sorted({student for _, student in totals} - set(canvas))
    return LmsExport([path], len(canvas), left_out, checks(frame))


def export_moodle(course: Course, path: Path, now: datetime | None = None) -> LmsExport:
    """One grading worksheet per assignment handed in, ``<path stem>-<assignment>.csv``, a row per participant."""
    frame = export_frame(course)
    totals = submission_totals(frame)
    moodle = lms_students_of(load_lms_students(course), MOODLE)
    modified = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    export = LmsExport(to_check=checks(frame))
    left_out: set[str] = set()
    for assignment in sorted({assignment for assignment, _ in totals}):
        most = score_text(points_possible(course, assignment))
        rows = [
            [MOODLE_IDENTIFIER.format(entry["ids"][assignment]), entry["name"],
             score_text(totals.get((assignment, student))), most, modified]
            for student, entry in sorted(moodle.items(), key=lambda item: int(item[1]["ids"].get(assignment) or 0))
            if entry["ids"].get(assignment)
        ]  # fmt: skip
        left_out |= {s for a, s in totals if a == assignment and not moodle.get(s, {}).get("ids", {}).get(a)}
        target = path.with_name(f"{path.stem}-{assignment}{path.suffix or '.csv'}")
        write_csv(pd.DataFrame(rows, columns=MOODLE_COLUMNS), target)
        export.files.append(target)
        export.students += len(rows)
    export.left_out = sorted(left_out)
    return export
