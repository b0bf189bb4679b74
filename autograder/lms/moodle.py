"""Moodle: a grading worksheet per assignment, and the feedback pages as a zip per assignment.

Grades: the assignment's *Upload grading worksheet* (feedback type *Offline grading worksheet*)
reads ``<output>-<assignment>.csv`` with the columns ``Identifier`` (``Participant <id>``, the
download's participant id), ``Full name``, ``Grade``, ``Maximum Grade`` and ``Last modified
(grade)`` (the export's time: Moodle skips a row whose grade changed in Moodle after it, unless
told to ignore that). A grade left empty is skipped ("grade has no value":
``process_import_grades`` in mod/assign/feedback/offline/locallib.php), which is how a submission
whose written answers are not graded yet stays out.

Feedback: the assignment's *Upload multiple feedback files in a zip* (feedback type *Feedback
files*) reads a zip per assignment, ``moodle-feedback-<assignment>.zip`` beside the export, whose entries are
``<Full Name>_<participant id>_assignsubmission_file_/<page>.html``: the folder names *Download all
submissions* writes (``download_submissions`` in mod/assign/locallib.php: the full name with
``_`` made a space, ``clean_filename``, then ``_<unique id>_`` and the plugin's subtype and type),
which the import splits at ``_`` and matches by the participant id alone
(``is_valid_filename_for_import`` in mod/assign/feedback/file/importziplib.php).
"""

import argparse
import re
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from autograder.lms import base
from autograder.lms.base import LmsExport, LmsFormat, register
from autograder.pipeline.commands.collect import MOODLE

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)"]
IDENTIFIER = "Participant {}"  # as Moodle's grading worksheet writes it
FEEDBACK_FOLDER = "{name}_{id}_assignsubmission_file_"  # download_submissions' folder, which the zip import reads
NAME_UNSAFE = re.compile(r"[^\w .\-]|_")  # what never goes into an entry's name: "_" splits it, "/" and "\" nest it
NAME_LENGTH = 100  # characters of the name kept: Moodle matches by the id alone
PARTICIPANT_ID = re.compile(r"[0-9]+")


def worksheet_path(output: Path, assignment: str) -> Path:
    """``<output>-<assignment>.csv``: one worksheet per Moodle assignment, beside ``output``."""
    return output.with_name(f"{output.stem}-{assignment}{output.suffix or '.csv'}")


def entry_name(name: str, participant: str) -> str:
    """The zip folder of a participant's feedback; the name (the download's, so the student's) made inert."""
    shown = NAME_UNSAFE.sub(" ", name)[:NAME_LENGTH].strip(" .") or "Participant"
    return FEEDBACK_FOLDER.format(name=shown, id=participant)


@register
class Moodle(LmsFormat):
    name = MOODLE
    summary = "a Moodle grading worksheet per assignment, OUTPUT-<assignment>.csv (--feedback: a zip of pages each)"

    def write_grades(self, frame: "pd.DataFrame", output: Path, now: datetime | None = None) -> LmsExport:
        totals, moodle = base.submission_totals(frame), self.students()
        modified = (now or datetime.now(UTC)).isoformat(timespec="seconds")
        export, left_out = LmsExport(to_check=base.checks(frame)), set()
        submissions = base.handed_in(frame)
        for assignment in sorted({assignment for assignment, _ in submissions}):
            most = base.score_text(self.points_possible(assignment))
            rows = [
                [IDENTIFIER.format(entry["ids"][assignment]), entry["name"],
                 base.score_text(totals.get((assignment, student))), most, modified]
                for student, entry in sorted(moodle.items(), key=lambda item: int(item[1]["ids"].get(assignment) or 0))
                if entry["ids"].get(assignment)
            ]
            left_out |= {s for a, s in submissions if a == assignment and not moodle.get(s, {}).get("ids", {}).get(a)}
            target = worksheet_path(output, assignment)
            base.write_table(rows, COLUMNS, target)
            export.files.append(target)
            export.students += len(rows)
        export.left_out = sorted(left_out)
        return export

    def send_feedback(self, args: argparse.Namespace) -> LmsExport:
        """A zip per assignment for *Upload multiple feedback files in a zip*: every page of every participant."""
        export, moodle = LmsExport(), self.students()
        entries: dict[str, list[tuple[Path, str]]] = {}  # assignment -> (page, its name in the zip)
        for (assignment, student), pages in self.feedback_pages().items():
            entry = moodle.get(student, {})
            participant = str(entry.get("ids", {}).get(assignment, ""))
            if not PARTICIPANT_ID.fullmatch(participant):
                export.left_out.append(f"{student}/{assignment}")
                continue
            folder = entry_name(str(entry.get("name", "")), participant)
            entries.setdefault(assignment, []).extend((page, f"{folder}/{page.name}") for page in pages)
            export.students += 1
        for assignment, named in entries.items():
            target = args.output.with_name(f"moodle-feedback-{assignment}.zip")
            with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
                for page, name in named:
                    archive.write(page, name)
            export.files.append(target)
        return export
