"""Canvas: the gradebook's CSV import, and the feedback pages as submission comments through Canvas's API.

Grades, *Grades → Import*: columns ``Student, ID, SIS User ID, SIS Login ID, Section``, then one
column per assignment, and a ``Points Possible`` row. Canvas matches a student by ``ID`` (the user
id of the download's file names) and an assignment column by its title (or by ``Title (assignment
id)``). A submission whose written answers are not graded yet gets an empty cell, and is listed.

Feedback, ``export --format canvas --feedback``: each page uploaded as a file of a submission
comment (canvasapi's ``Submission.upload_comment``: Canvas's submission comment file upload, then
the comment that carries the file), to the assignment of the course whose name is the notebook's.
The token comes from the environment only (:data:`TOKEN_VARIABLE`); ``--dry-run`` lists the
uploads and makes no request.
"""

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.lms import base
from autograder.lms.base import LmsExport, LmsFormat, register
from autograder.pipeline.commands.collect import CANVAS

if TYPE_CHECKING:
    import pandas as pd

STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_ROW = "Points Possible"
# an access token of the instructor's (Canvas: Account → Settings → New Access Token), read from here only
TOKEN_VARIABLE = "CANVAS_API_TOKEN"


@register
class Canvas(LmsFormat):
    name = CANVAS
    summary = "Canvas's gradebook import (--feedback: each page as a submission comment, through Canvas's API)"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("canvas --feedback", f"the token is read from ${TOKEN_VARIABLE}")
        group.add_argument("--canvas-url", help="the Canvas server, e.g. https://canvas.example.edu")
        group.add_argument("--canvas-course", type=int, help="the course's id (its address: /courses/<id>)")
        group.add_argument("--dry-run", action="store_true", help="list the uploads, send nothing")

    def user_ids(self) -> dict[str, str]:
        """``{student: Canvas user id}`` (one id across the course; none for an anonymous download)."""
        return {student: next((i for i in entry["ids"].values() if i), "")
                for student, entry in self.students().items()}

    def write_grades(self, frame: "pd.DataFrame", output: Path) -> LmsExport:
        totals, submissions = base.submission_totals(frame), base.handed_in(frame)
        assignments = sorted({assignment for assignment, _ in submissions})
        canvas = {student: user_id for student, user_id in self.user_ids().items() if user_id}
        names = {student: entry["name"] for student, entry in self.students().items()}
        rows = [{"Student": POINTS_ROW} | {a: base.score_text(self.points_possible(a)) for a in assignments}]
        for student, user_id in sorted(canvas.items()):
            scores = {a: base.score_text(totals.get((a, student))) for a in assignments}
            rows.append({"Student": names[student], "ID": user_id, "SIS User ID": "", "SIS Login ID": "", "Section": ""}
                        | scores)
        base.write_table(rows, STUDENT_COLUMNS + assignments, output)
        left_out = sorted({student for _, student in submissions} - set(canvas))
        return LmsExport([output], len(canvas), left_out, base.checks(frame))

    def send_feedback(self, args: argparse.Namespace) -> LmsExport:
        """Each student's pages as comment files of their submission; ``--dry-run``: only list them."""
        export, user_ids = LmsExport(), self.user_ids()
        uploads: list[tuple[str, str, Path]] = []  # (assignment, user id, page)
        for (assignment, student), pages in self.feedback_pages().items():
            if not user_ids.get(student, "").isdigit():
                export.left_out.append(f"{student}/{assignment}")
                continue
            uploads += [(assignment, user_ids[student], page) for page in pages]
            export.students += 1
        if args.dry_run:
            export.planned = [f"{page} -> user {user_id}'s submission of {assignment}"
                              for assignment, user_id, page in uploads]
            return export
        course = connect(args).get_course(args.canvas_course)
        by_name = {assignment.name: assignment for assignment in course.get_assignments()}
        for assignment, user_id, page in uploads:
            if assignment not in by_name:
                export.to_check.append(f"{page}: course {args.canvas_course} has no assignment named {assignment}")
                continue
            uploaded, _ = by_name[assignment].get_submission(int(user_id)).upload_comment(page)
            if uploaded:
                export.files.append(page)
            else:
                export.to_check.append(f"{page}: Canvas did not confirm the upload")
        return export

def connect(args: argparse.Namespace) -> "canvasapi.Canvas":  # noqa: F821 (imported only when feedback is sent)
    import canvasapi  # only this route needs it

    token = os.environ.get(TOKEN_VARIABLE)
    if not token or not args.canvas_url or args.canvas_course is None:
        raise SystemExit(f"export --format canvas --feedback needs --canvas-url, --canvas-course and ${TOKEN_VARIABLE}")
    return canvasapi.Canvas(args.canvas_url, token)
