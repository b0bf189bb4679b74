"""run_autograder's work: take the student's notebook from Gradescope's submission folder, grade it with the
course's grader (:func:`autograder.pipeline.commands.grade.grade`: sandbox, limits, clean re-run) and write
results.json.

``--prepare`` (setup.sh, once per image) grades the reference answers instead: the image is refused unless they get
full marks, and their cell times, kept in the grading folder, set each cell's time limit for every submission.
"""

import argparse
import json
import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path

from autograder.cli import use_this_environments_tools
from autograder.course.course import Course
from autograder.gradescope import PLAN_FILE, gradescope_root
from autograder.gradescope.results_json import results_json
from autograder.launch.limits import Limits
from autograder.launch.sandbox import bwrap_available, sandbox_command
from autograder.pipeline.commands.feedback import Secrets
from autograder.pipeline.commands.grade import GradeOptions, grade, write_reference_submission
from autograder.pipeline.exchange.handin_names import find_notebooks, shown
from autograder.pipeline.exchange.handins import MAX_BYTES
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import Status, SubmissionResult, result_path

STUDENT = "student"  # Gradescope runs one submission per container: one student in the grading folder
REFERENCE = "reference-check"
log = logging.getLogger("autograder.gradescope")


def read_plan(course: Course) -> tuple[str, Limits]:
    """The zip's assignment and limits (written by :mod:`autograder.gradescope.build`)."""
    plan = json.loads((course.root / PLAN_FILE).read_text())
    return plan["assignment"], Limits(plan["wall_seconds"], plan["memory_bytes"], cell_timeout=plan["cell_timeout"])


def sandbox_works() -> bool:
    """Whether bubblewrap can make its sandbox here: a container may forbid the namespaces it needs."""
    if not bwrap_available():
        return False
    run = subprocess.run(sandbox_command(["true"], []), capture_output=True, timeout=60, check=False)
    return run.returncode == 0


def pick_notebook(submission: Path, assignment: str) -> tuple[Path | None, list[str]]:
    """The file to grade: the notebook's own name or a copy's (``01_attention (3).ipynb``), else the one ``.ipynb``
    handed in under any name; and what to tell the student about the choice."""
    found = find_notebooks(submission, [assignment])
    if assignment in found.taken:
        taken = submission / found.taken[assignment]
    else:
        everything = sorted(p for p in submission.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        plain = [p for p in everything if p.is_file() and not p.is_symlink()]
        if len(plain) != 1:
            names = ", ".join(shown(str(p.relative_to(submission))) for p in everything) or "no .ipynb file"
            return None, [f"No {assignment}.ipynb to grade: the submission holds {names}."]
        taken = plain[0]
    name = str(taken.relative_to(submission))
    notes = [] if name == f"{assignment}.ipynb" else [f"Graded {shown(name)} as {assignment}.ipynb."]
    return taken, notes + [f"Not graded: {shown(n)} ({why})" for n, why in found.ignored.items()]


def hand_in(course: Course, assignment: str, student: str, notebook: Path | None) -> list[str]:
    """Put ``notebook`` where ``grade`` reads it (an empty folder for none: graded as missing)."""
    folder = course.grading.submitted(student, assignment)
    shutil.rmtree(course.grading.submitted(student), ignore_errors=True)
    folder.mkdir(parents=True)
    if notebook is None:
        return []
    if notebook.stat().st_size > MAX_BYTES:
        return [f"Not graded: {shown(notebook.name)} is larger than {MAX_BYTES:,} bytes."]
    shutil.copyfile(notebook, folder / f"{assignment}.ipynb")
    return []


def grade_one(course: Course, assignment: str, student: str, limits: Limits) -> SubmissionResult:
    sandbox = sandbox_works()
    if not sandbox:
        log.warning("bubblewrap cannot make its sandbox here: student code runs with limits only, and could read "
                    "the hidden tests (autograder/launch/sandbox.py)")
    result_path(course, assignment, student).unlink(missing_ok=True)
    options = GradeOptions([assignment], [student], jobs=1, force=True, limits=limits, sandbox=sandbox, progress=False)
    (result,) = grade(course, options)
    log.info("%s: %s, %g points in %.1f s (%s)", student, result.status, result.score, result.seconds, result.reason)
    return result


def prepare(course: Course) -> int:
    """Grade the reference answers (setup.sh); 1 unless they get full marks."""
    assignment, limits = read_plan(course)
    folder = course.grading.submitted(REFERENCE, assignment)
    shutil.rmtree(course.grading.submitted(REFERENCE), ignore_errors=True)
    write_reference_submission(course, assignment, folder)
    result = grade_one(course, assignment, REFERENCE, limits)
    shutil.rmtree(course.grading.submitted(REFERENCE))
    most = sum(test.max_score for test in result.tests)
    if result.status != Status.GRADED or result.score < most:
        log.error("the reference answers got %g of %g points (%s): %s", result.score, most, result.status, result.tests)
        return 1
    return 0


def write_results(results: Path, content: dict) -> None:
    results.mkdir(parents=True, exist_ok=True)
    (results / "results.json").write_text(json.dumps(content, indent=1, ensure_ascii=False))


def run(root: Path, course: Course) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json``; a grader failure is written there too."""
    start = time.monotonic()
    try:
        assignment, limits = read_plan(course)
        notebook, notes = pick_notebook(root / "submission", assignment)
        notes += hand_in(course, assignment, STUDENT, notebook)
        secrets = Secrets.of_course(course)
        result = grade_one(course, assignment, STUDENT, limits)
        cells = gradebook.grade_cells(gradebook.template_gradebook(course, assignment), assignment)
        content = results_json(result, cells, secrets, notes)
    except Exception:  # a grader failure still gets a result that says so
        log.exception("grading failed")
        content = {"score": 0.0, "output": "The autograder failed on this submission; the instructor can see why.",
                   "stdout_visibility": "hidden", "tests": []}
    content["execution_time"] = round(time.monotonic() - start)
    write_results(root / "results", content)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope.run", description=__doc__)
    parser.add_argument("--prepare", action="store_true", help="grade the reference answers (setup.sh)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(asctime)s %(levelname)s %(message)s")
    use_this_environments_tools()
    course = Course.default()  # the zip's files: the course subset beside this package
    return prepare(course) if args.prepare else run(gradescope_root(), course)


if __name__ == "__main__":
    sys.exit(main())
