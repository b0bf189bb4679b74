"""Grades back into the LMS: a Canvas-style zip and a Moodle-style folder collected, scored, exported.

No kernel runs: the scores are written as ``grade`` writes them (a result per submission and
the merged gradebook, nbgrader's own definition of notebook 01), with one written answer graded
by hand. Each LMS file must have exactly the columns the LMS documents for its import, one row
per student with the identifier the download's names gave, and each student's total.
"""

import csv
import json
import shutil
import sys
import zipfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.cli import main
from autograder.course.course import Course
from autograder.course.notebooks import nbgrader_meta
from autograder.course.settings import REPO_ROOT, source_notebook
from autograder.lms.base import LmsExport
from autograder.lms.canvas import STUDENT_COLUMNS as CANVAS_STUDENT_COLUMNS
from autograder.lms.canvas import Canvas
from autograder.lms.moodle import COLUMNS as MOODLE_COLUMNS
from autograder.lms.moodle import Moodle
from autograder.pipeline.commands.collect import CANVAS, MOODLE, collect, lms_students_path, load_lms_students
from autograder.pipeline.commands.export import export_csv, export_frame
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.refusals import Refusal, record_refusals
from autograder.pipeline.storage.results import Status, SubmissionResult, save_result
from autograder.pipeline.storage.results import TestResult as CellResult  # (a Test* name would be collected by pytest)
from autograder.similarity.compare import results_path as similarity_results
from tests.grader.hostile_class import ASSIGNMENT, points_per_test, solution
from tests.support.course import ThrowawayCourse

WRITTEN, WRITTEN_SCORE = "written_sqrt_dk", 1.5
LOST = "sdpa_values"  # the test one student fails
NOW = datetime(2026, 3, 2, 14, 5, tzinfo=UTC)


def most_points() -> float:
    """Every graded cell of notebook 01: its tests and its written answers."""
    source = nbformat.read(source_notebook(ASSIGNMENT), as_version=4)
    return sum(nbgrader_meta(cell)["points"] for cell in source.cells if nbgrader_meta(cell).get("grade"))


def written_answers() -> list[str]:
    """The grade ids of notebook 01's written answers (graded by hand in formgrader)."""
    source = nbformat.read(source_notebook(ASSIGNMENT), as_version=4)
    return sorted(nbgrader_meta(cell)["grade_id"] for cell in source.cells
                  if cell.cell_type == "markdown" and nbgrader_meta(cell).get("grade"))


def autograded(student: str, lost: tuple[str, ...] = ()) -> SubmissionResult:
    tests = [CellResult(ASSIGNMENT, name, points, score=0.0 if name in lost else points)
             for name, points in points_per_test().items()]
    return SubmissionResult(ASSIGNMENT, student, Status.GRADED, tests=tests)


@pytest.fixture(scope="module")
def defined(throwaway_course: ThrowawayCourse) -> Path:
    """A gradebook holding nbgrader's definition of notebook 01 (made once: it runs generate_assignment)."""
    return gradebook.template_gradebook(throwaway_course(ASSIGNMENT, name="definition"), ASSIGNMENT)


def defined_course(throwaway_course: ThrowawayCourse, defined: Path) -> Course:
    """A throw-away course whose gradebook holds notebook 01's definition."""
    course = throwaway_course(ASSIGNMENT)
    course.grading.path.mkdir(exist_ok=True)
    shutil.copyfile(defined, course.grading.gradebook)
    return course


def record(course: Course, results: list[SubmissionResult], written: dict[str, float]) -> None:
    """What ``grade`` leaves behind for these results, then the instructor's manual scores: ``written``'s
    student gets that score for WRITTEN and 0 for the other written answers."""
    db = course.grading.gradebook
    with Gradebook(gradebook.sqlite_url(db)) as gb:
        for result in results:
            gradebook.merge(gb, result)
    for result in results:
        save_result(course, result)
    with Gradebook(gradebook.sqlite_url(db)) as gb:
        for student, score in written.items():
            for answer in written_answers():
                grade = gb.find_grade(answer, ASSIGNMENT, ASSIGNMENT, student)
                grade.manual_score = score if answer == WRITTEN else 0.0
        gb.db.commit()


def export_canvas(course: Course, path: Path) -> LmsExport:
    return Canvas(course).write_grades(export_frame(course), path)


def export_moodle(course: Course, path: Path, now: datetime) -> LmsExport:
    return Moodle(course).write_grades(export_frame(course), path, now)


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="") as handle:
        return list(csv.reader(handle))


def test_canvas_round_trip(tmp_path: Path, throwaway_course: ThrowawayCourse, defined: Path) -> None:
    course = defined_course(throwaway_course, defined)
    good = nbformat.writes(solution())
    download = tmp_path / "submissions.zip"
    with zipfile.ZipFile(download, "w") as archive:  # Canvas: <sortable name>[_LATE]_<user id>_<file id>_<name>
        archive.writestr(f"smithjane_1234_5678_{ASSIGNMENT}.ipynb", good)
        archive.writestr(f"doejohn_LATE_99_5679_{ASSIGNMENT}-1.ipynb", good)
        archive.writestr(f"brokenbob_7_5680_{ASSIGNMENT}.ipynb", "{ not json")
        archive.writestr(f"ann_hw_{ASSIGNMENT}.ipynb", good)  # renamed by hand: no Canvas user id
    found = collect(download, course)
    assert {student for student, _, _ in found.collected} == {"smithjane", "doejohn", "brokenbob", "ann"}
    assert {s: e["ids"] for s, e in load_lms_students(course).items()} == {
        "smithjane": {ASSIGNMENT: "1234"}, "doejohn": {ASSIGNMENT: "99"}, "brokenbob": {ASSIGNMENT: "7"}}
    record(course, [autograded("smithjane"), autograded("doejohn", lost=(LOST,)), autograded("ann"),
                  SubmissionResult(ASSIGNMENT, "brokenbob", Status.UNREADABLE, "not a notebook")],
           written={"smithjane": WRITTEN_SCORE, "doejohn": 0.0, "ann": 0.0})

    written = export_canvas(course, tmp_path / "canvas.csv")

    rows = read_csv(tmp_path / "canvas.csv")
    assert rows[0] == CANVAS_STUDENT_COLUMNS + [ASSIGNMENT]
    assert rows[1] == ["Points Possible", "", "", "", "", f"{most_points():g}"]
    full = sum(points_per_test().values())
    by_id = {row[1]: row for row in rows[2:]}
    assert len(rows) == 5 and set(by_id) == {"1234", "99", "7"}  # one row per student Canvas knows
    assert by_id["1234"] == ["smithjane", "1234", "", "", "", f"{full + WRITTEN_SCORE:g}"]
    assert by_id["99"][-1] == f"{full - points_per_test()[LOST]:g}"
    assert by_id["7"][-1] == "0"  # unreadable: a real zero, and the export lists it to look at first
    assert written.left_out == ["ann"] and written.to_check == [f"brokenbob/{ASSIGNMENT}: unreadable"]


def test_moodle_round_trip(tmp_path: Path, throwaway_course: ThrowawayCourse, defined: Path) -> None:
    course = defined_course(throwaway_course, defined)
    download = tmp_path / "download"  # Moodle: <Full Name>_<participant id>_assignsubmission_file_/<file>
    for folder in ("Ann Lee_42_assignsubmission_file_", "Bob Ray_43_assignsubmission_file_", "plain"):
        (download / folder).mkdir(parents=True)
        nbformat.write(solution(), download / folder / f"{ASSIGNMENT}.ipynb")
    nbformat.write(solution(), download / f"Cy Dee_45_assignsubmission_file_{ASSIGNMENT}.ipynb")  # flat layout
    collect(download, course)
    assert {s: (e["name"], e["ids"]) for s, e in load_lms_students(course).items()} == {
        "Ann_Lee": ("Ann Lee", {ASSIGNMENT: "42"}), "Bob_Ray": ("Bob Ray", {ASSIGNMENT: "43"}),
        "Cy_Dee": ("Cy Dee", {ASSIGNMENT: "45"})}
    record(course, [autograded("Ann_Lee"), autograded("Bob_Ray", lost=(LOST,)), autograded("Cy_Dee"),
                  autograded("plain")], written={"Ann_Lee": WRITTEN_SCORE, "Bob_Ray": 0.0, "Cy_Dee": 0.0,
                                                 "plain": 0.0})

    written = export_moodle(course, tmp_path / "grades.csv", now=NOW)

    assert written.files == [tmp_path / f"grades-{ASSIGNMENT}.csv"] and written.left_out == ["plain"]
    rows = read_csv(written.files[0])
    full, most, when = sum(points_per_test().values()), f"{most_points():g}", "2026-03-02T14:05:00+00:00"
    assert rows == [
        MOODLE_COLUMNS,
        ["Participant 42", "Ann Lee", f"{full + WRITTEN_SCORE:g}", most, when],
        ["Participant 43", "Bob Ray", f"{full - points_per_test()[LOST]:g}", most, when],
        ["Participant 45", "Cy Dee", f"{full:g}", most, when],
    ]


def test_moodle_blind_marking_and_two_students_of_one_name(tmp_path: Path, throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course(ASSIGNMENT)
    download = tmp_path / "download"
    for folder in ("Participant_44_assignsubmission_file_", "Participant_46_assignsubmission_file_",
                   "Ann Lee_42_assignsubmission_file_", "Ann Lee_57_assignsubmission_file_"):
        (download / folder).mkdir(parents=True)
        nbformat.write(solution(), download / folder / f"{ASSIGNMENT}.ipynb")
    found = collect(download, course)
    students = {student for student, _, _ in found.collected}
    assert len(students) == 4 and {"Participant_44", "Participant_46"} < students
    ann_lee = [entry for entry in load_lms_students(course).values() if entry["name"] == "Ann Lee"]
    assert {entry["ids"][ASSIGNMENT] for entry in ann_lee} == {"42", "57"}
    assert found.replaced == []  # neither Ann Lee's notebook replaced the other's


def test_export_format_flag(
    tmp_path: Path, throwaway_course: ThrowawayCourse, defined: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course = defined_course(throwaway_course, defined)
    download = tmp_path / "download.zip"
    with zipfile.ZipFile(download, "w") as archive:
        archive.writestr(f"smithjane_1234_5678_{ASSIGNMENT}.ipynb", nbformat.writes(solution()))
    assert main(["--root", str(course.root), "collect", str(download)]) == 0
    assert "(canvas 1234)" in capsys.readouterr().out
    record(course, [autograded("smithjane")], written={})
    assert main(["--root", str(course.root), "export", "--format", "canvas", "--output", str(tmp_path / "c.csv")]) == 0
    assert "1 student rows" in capsys.readouterr().out
    assert read_csv(tmp_path / "c.csv")[2][:2] == ["smithjane", "1234"]
    assert main(["--root", str(course.root), "export", "--output", str(tmp_path / "plain.csv")]) == 0  # the default
    assert read_csv(tmp_path / "plain.csv")[0][:3] == ["assignment", "student", "status"]


def test_written_answers_not_graded_yet_are_pending_never_a_silent_total(
    tmp_path: Path, throwaway_course: ThrowawayCourse, defined: Path
) -> None:
    course = defined_course(throwaway_course, defined)
    lms = {"Ann Lee": ("canvas", "1234"), "Bob Ray": ("moodle", "42")}
    known = {name.replace(" ", "_"): {"lms": kind, "name": name, "ids": {ASSIGNMENT: lms_id}}
             for name, (kind, lms_id) in lms.items()}
    lms_students_path(course).write_text(json.dumps(known))
    record(course, [autograded("Ann_Lee"), autograded("Bob_Ray")], written={})
    full, written_most = sum(points_per_test().values()), most_points() - sum(points_per_test().values())
    assert written_most > 0

    rows = export_frame(course).set_index("student")
    assert rows.loc["Ann_Lee", "total"] == full and rows.loc["Ann_Lee", "points pending"] == written_most
    assert rows.loc["Ann_Lee", "written pending"] == " | ".join(f"{ASSIGNMENT}:{a}" for a in written_answers())
    canvas = export_canvas(course, tmp_path / "canvas.csv")
    assert read_csv(tmp_path / "canvas.csv")[2] == ["Ann Lee", "1234", "", "", "", ""]  # left out: Canvas keeps its own
    moodle = export_moodle(course, tmp_path / "grades.csv", NOW)
    assert read_csv(moodle.files[0])[1][:3] == ["Participant 42", "Bob Ray", ""]  # Moodle skips an empty grade
    pending = f"{written_most:g} points of written answers not graded yet, grade left out"
    listed = [f"{student}/{ASSIGNMENT}: {pending}" for student in ("Ann_Lee", "Bob_Ray")]
    assert canvas.to_check == moodle.to_check == listed

    record(course, [], written={"Ann_Lee": WRITTEN_SCORE, "Bob_Ray": 0.0})  # the instructor grades them

    rows = export_frame(course).set_index("student")
    assert rows.loc["Ann_Lee", "total"] == full + WRITTEN_SCORE and rows.loc["Ann_Lee", "points pending"] == 0
    assert rows.loc["Bob_Ray", "written pending"] == ""
    assert export_canvas(course, tmp_path / "canvas.csv").to_check == []
    assert read_csv(tmp_path / "canvas.csv")[2][-1] == f"{full + WRITTEN_SCORE:g}"
    assert read_csv(export_moodle(course, tmp_path / "grades.csv", NOW).files[0])[1][2] == f"{full:g}"


# What a spreadsheet may run as a formula when a cell begins with it (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def planted(start: str, where: str) -> str:
    return f'{start}HYPERLINK("http://x.example/{where}", "{where}")'


def plant_everywhere(course: Course) -> None:
    """For each starting character, a Canvas and a Moodle student whose every text a student can reach begins with
    it (id, LMS name, a test's failure, reason, flags, repairs, files, a refusal, the closest match), and a student
    whose total is negative, and one whose every hand-in was refused."""
    results, refusals, lms, closest = [], [], {}, {}
    for index, start in enumerate(FORMULA_STARTS):
        for kind in (CANVAS, MOODLE):
            student = f"{start}{kind}{index}"
            result = autograded(student, lost=(LOST,))
            result.tests = [replace(test, message=planted(start, "why") if test.grade_id == LOST else "")
                            for test in result.tests]
            result.reason, result.flags = planted(start, "reason"), [planted(start, "flag")]
            result.repairs, result.files = [planted(start, "repair")], [planted(start, "file")]
            results.append(result)
            refusals.append(Refusal(student, ASSIGNMENT, planted(start, "refused"), f"{student}+found", "2026-03-01"))
            lms[student] = {"lms": kind, "name": planted(start, "name"), "ids": {ASSIGNMENT: str(100 + len(lms))}}
            closest[student] = {"first": student, "second": f"{start}match", "score": 0.9, "z": 3.0}
    refusals.append(Refusal("-refused", ASSIGNMENT, planted("=", "refused"), "only-refused", "2026-03-01"))
    negative = autograded("negative")
    negative.tests = [replace(test, score=0.0) for test in negative.tests]
    negative.tests[0] = replace(negative.tests[0], score=-2.0)
    lms["negative"] = {"lms": CANVAS, "name": "Neg Ative", "ids": {ASSIGNMENT: "99"}}
    record(course, [*results, negative], written={"negative": 0.0})
    record_refusals(course.grading.path, refusals)
    lms_students_path(course).write_text(json.dumps(lms))
    similarity_results(course).write_text(json.dumps({"assignments": {ASSIGNMENT: {"closest": closest}}}))


def is_number(text: str) -> bool:
    """Whether a spreadsheet reads ``text`` as a number (``-2.0``): float() reads it, with no space around it."""
    try:
        float(text)
    except ValueError:
        return False
    return text == text.strip()


def cells(path: Path) -> dict[str, list[str]]:
    """Each column of a CSV file (its header first) as a spreadsheet would get it."""
    rows = read_csv(path)
    return {header: [header] + [row[position] for row in rows[1:]] for position, header in enumerate(rows[0])}


def test_no_cell_of_any_export_begins_a_formula_and_numbers_stay_numbers(
    tmp_path: Path, throwaway_course: ThrowawayCourse, defined: Path
) -> None:
    course = defined_course(throwaway_course, defined)
    plant_everywhere(course)
    export_csv(course, tmp_path / "grades.csv")
    export_canvas(course, tmp_path / "canvas.csv")
    moodle = export_moodle(course, tmp_path / "moodle.csv", now=NOW).files
    exports = {"grades.csv": cells(tmp_path / "grades.csv"), "canvas.csv": cells(tmp_path / "canvas.csv"),
               "moodle.csv": cells(moodle[0])}
    reachable = {  # the columns that hold what students wrote: each got every starting character, neutralised
        "grades.csv": {"student", "reason", "flags", "repairs", "files", f"{ASSIGNMENT}:{LOST} why",
                       "closest match"},
        "canvas.csv": {"Student"}, "moodle.csv": {"Full name"},
    }
    for name, columns in exports.items():
        for column, values in columns.items():
            formulas = [value for value in values if value.startswith(FORMULA_STARTS) and not is_number(value)]
            assert formulas == [], f"{name}, column {column!r}: cells a spreadsheet runs as formulas"
        for column in reachable[name]:
            for start in FORMULA_STARTS:
                assert any(value.startswith(f"'{start}") for value in columns[column]), (name, column, repr(start))
    grades = exports["grades.csv"]
    negative = grades["student"].index("negative")
    assert grades["total"][negative] == "-2.0" and grades[f"{ASSIGNMENT} total"][negative] == "-2.0", "a number kept"
    canvas = exports["canvas.csv"]
    assert canvas[ASSIGNMENT][canvas["Student"].index("Neg Ative")] == "-2", "a negative score is a number in Canvas"


THIRD_FORMAT = '''"""A throwaway LMS: a row per submission graded to the end, its student, assignment and total."""

from pathlib import Path

from autograder.lms.base import LmsExport, LmsFormat, register, submission_totals, write_table


@register
class Plain(LmsFormat):
    name = "plainlms"
    summary = "a throwaway format of the registry's test"

    def write_grades(self, frame, output: Path) -> LmsExport:
        totals = submission_totals(frame)
        rows = [[student, assignment, f"{total:g}"] for (assignment, student), total in totals.items()]
        write_table(rows, ["student", "assignment", "total"], output)
        return LmsExport([output], len(rows))
'''


def test_a_new_format_is_one_module_and_the_command_line_offers_it(
    tmp_path: Path, throwaway_course: ThrowawayCourse, defined: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The documented way (docs/maintainers.md): a module in autograder/lms/ whose class is ``@register``-ed."""
    import autograder.lms
    from autograder.lms import base

    assert "plainlms" not in base.formats()
    extra = tmp_path / "more_formats"
    extra.mkdir()
    (extra / "plainlms.py").write_text(THIRD_FORMAT)  # as if dropped into autograder/lms/
    monkeypatch.setattr(autograder.lms, "__path__", [*autograder.lms.__path__, str(extra)])
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))  # the format leaves with the test
    monkeypatch.setitem(sys.modules, "autograder.lms.plainlms", None)  # restored (removed) after the test
    del sys.modules["autograder.lms.plainlms"]
    course = defined_course(throwaway_course, defined)
    record(course, [autograded("smithjane", lost=(LOST,))], written={"smithjane": WRITTEN_SCORE})

    root = ["--root", str(course.root)]
    assert main([*root, "export", "--format", "plainlms", "--output", str(tmp_path / "plain.csv")]) == 0
    full = sum(points_per_test().values()) - points_per_test()[LOST] + WRITTEN_SCORE
    assert read_csv(tmp_path / "plain.csv") == [["student", "assignment", "total"],
                                                ["smithjane", ASSIGNMENT, f"{full:g}"]]
    assert "plainlms import file ->" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # it has no feedback route, and says so instead of writing another LMS's files
        main([*root, "export", "--format", "plainlms", "--feedback"])
    assert sorted(base.formats()) == ["canvas", "moodle", "plainlms"]


def test_the_export_lands_in_the_grading_folder_by_default(
    throwaway_course: ThrowawayCourse, defined: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course = defined_course(throwaway_course, defined)
    record(course, [autograded("smithjane")], written={})
    lms_students_path(course).write_text(json.dumps({"smithjane": {"lms": MOODLE, "name": "Jane Smith",
                                                                    "ids": {ASSIGNMENT: "7"}}}))
    assert main(["--root", str(course.root), "export"]) == 0
    assert main(["--root", str(course.root), "export", "--format", MOODLE]) == 0
    assert sorted(p.name for p in course.grading.path.glob("grades*.csv")) == ["grades-01_attention.csv", "grades.csv"]
    assert not list(course.root.glob("grades*")), "nothing written at the course's root"
    assert f"{course.grading.path.name}/" in (REPO_ROOT / ".gitignore").read_text().splitlines()  # never committed
    assert f"{course.grading.file('grades.csv')}" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="--format"):  # feedback goes to an LMS, never into the plain CSV
        main(["--root", str(course.root), "export", "--feedback"])
