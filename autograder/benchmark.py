"""Benchmark: ``grade --jobs N`` against plain ``nbgrader autograde``, on generated submissions.

Usage: ``python -m autograder.benchmark [--submissions 20] [--jobs 2]``. For every assignment it
makes a throw-away course with N submissions (correct, blank and half-solved notebooks in
turn), grades it once with the plain nbgrader command and once with this grader, and prints
seconds per submission and the ratio. Run on an idle machine; it takes several minutes.
"""

import argparse
import shutil
import subprocess
import tempfile
import time
from functools import partial
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course import REPO_ROOT, assignment_ids, release_notebook, source_notebook
from autograder.grade import grade
from autograder.isolation import Limits
from autograder.notebooks import fill_answers, grade_id, is_answer_cell, reference_answers


def submissions(assignment: str, count: int) -> list[NotebookNode]:
    """``count`` student notebooks: all answers, none, and the first half, in turn."""
    answers = reference_answers(nbformat.read(source_notebook(assignment), 4))
    release = nbformat.read(release_notebook(assignment), 4)
    answer_ids = [grade_id(cell) for cell in release.cells if is_answer_cell(cell)]
    solved = {0: answer_ids, 1: [], 2: answer_ids[: len(answer_ids) // 2]}
    return [fill_answers(release, {name: answers[name] for name in solved[index % 3]}) for index in range(count)]


def make_course(root: Path, assignment: str, count: int) -> None:
    for folder in ("solutions", "notebooks"):
        shutil.copytree(REPO_ROOT / folder / assignment, root / folder / assignment)
    (root / "nbgrader_config.py").write_text(  # what the plain nbgrader command reads
        "from pathlib import Path\nfrom autograder.course import configure\n"
        "configure(get_config(), Path(__file__).resolve().parent)\n"
    )
    for index, notebook in enumerate(submissions(assignment, count)):
        folder = root / "grading" / "submitted" / f"student{index:03d}" / assignment
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{assignment}.ipynb")


def plain_nbgrader(root: Path, assignment: str) -> float:
    """Seconds for ``nbgrader generate_assignment`` + ``nbgrader autograde`` of the whole class."""
    start = time.monotonic()
    for command in (["generate_assignment", assignment, "--force"], ["autograde", assignment, "--force"]):
        subprocess.run(["nbgrader", *command], cwd=root, check=True, capture_output=True)
    return time.monotonic() - start


def ours(root: Path, assignment: str, jobs: int, clean_rerun: bool) -> float:
    start = time.monotonic()
    grade(root=root, assignments=[assignment], jobs=jobs, limits=Limits(), clean_rerun=clean_rerun, progress=False)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    print(f"{'assignment':16s} {'grader':34s} {'seconds':>8s} {'s/submission':>13s} {'speed-up':>9s}")
    for assignment in assignment_ids():
        timings = {}
        for name, run in [
            ("plain nbgrader autograde", partial(plain_nbgrader, assignment=assignment)),
            (f"grade --jobs {args.jobs}", partial(ours, assignment=assignment, jobs=args.jobs, clean_rerun=True)),
            (f"grade --jobs {args.jobs} --no-clean-rerun",
             partial(ours, assignment=assignment, jobs=args.jobs, clean_rerun=False)),
        ]:  # fmt: skip
            with tempfile.TemporaryDirectory(prefix="benchmark-") as scratch:
                make_course(Path(scratch), assignment, args.submissions)
                timings[name] = run(Path(scratch))
            base = timings["plain nbgrader autograde"]
            print(f"{assignment:16s} {name:34s} {timings[name]:8.1f} {timings[name] / args.submissions:13.2f} "
                  f"{base / timings[name]:8.2f}x", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
