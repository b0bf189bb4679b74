"""``export``: one CSV row per student and assignment, with a status and every test's result.

nbgrader's own export shows a missing notebook, an unreadable one and a real zero all as
0.0; here the ``status`` and ``reason`` columns say which, the per-test columns say where
the points went (and a ``<notebook>:<test> why`` column, why a test lost its points: its
failure, the time limit it ran into, the clean re-run's verdict), and the written answers'
manual scores come from the gradebook. The
``feedback`` column says whether the student's feedback is ``written``, ``held (flagged)``
until the instructor releases it, ``released``, or not written yet (``none``).
"""

from pathlib import Path

import pandas as pd
from nbgrader.api import Gradebook, MissingEntry

from autograder.course.paths import GRADING_DIRECTORY, GradingFolder, sqlite_url
from autograder.pipeline.feedback import feedback_state, load_releases
from autograder.pipeline.results import SubmissionResult, load_results


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


def export_frame(root: Path, grading_directory: str = GRADING_DIRECTORY) -> pd.DataFrame:
    """The grades of every graded submission (rows sorted by assignment, then student)."""
    db_path = GradingFolder(root, grading_directory).gradebook
    releases = load_releases(root, grading_directory)
    rows = []
    for result in load_results(root, grading_directory):
        row: dict[str, object] = {
            "assignment": result.assignment,
            "student": result.student,
            "status": str(result.status),
            "reason": result.reason,
            "flags": " | ".join(result.flags),
            "repairs": " | ".join(result.repairs),
            "feedback": feedback_state(result, releases, root, grading_directory),
            "autograded_score": result.score,
            "autograded_max": sum(test.max_score for test in result.tests),
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
        for test in result.tests:  # why each test lost points: its failure, its time limit, the clean re-run
            if test.score < test.max_score:
                row[f"{test.notebook}:{test.grade_id} why"] = test.message or "failed"
        row["seconds"] = round(result.seconds, 1)
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.sort_values(["assignment", "student"]).reset_index(drop=True) if rows else frame


def export_csv(root: Path, path: Path, grading_directory: str = GRADING_DIRECTORY) -> pd.DataFrame:
    frame = export_frame(root, grading_directory)
    frame.to_csv(path, index=False)
    return frame
