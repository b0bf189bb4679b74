"""Benchmark: ``grade`` against plain ``nbgrader autograde``, per notebook, and a class-of-300 projection.

For every assignment (or those named) it makes a throw-away course with N submissions (correct, blank and
half-solved notebooks in turn) and grades it with each grader in turn: plain ``nbgrader generate_assignment`` +
``autograde``, ``grade --jobs N`` with and without the clean re-run, and ``grade`` on a dask LocalCluster of
``--dask-workers`` workers (``--quick``: the first two only). It prints seconds per submission and the speed-up
over plain nbgrader, then what a class of 300 handing in every notebook would take on this machine and on a dask
cluster of such machines.

Each time covers the whole command on a fresh course, one-off costs included (starting the
zygotes, timing the reference answers), spread over the N submissions: with few submissions
the figures per submission are pessimistic. The cluster projection assumes that a cluster of
K machines like this one grades K times as fast: the jobs share nothing but the gradebook
merge, which takes milliseconds. Run it on an idle machine; it takes a while.
"""

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.cli import use_this_environments_tools
from autograder.course.course import Course
from autograder.course.notebooks import fill_answers, grade_id, is_answer_cell, reference_answers
from autograder.pipeline.commands import profile
from autograder.pipeline.commands.grade import GradeOptions, grade

CLASS_SIZE = 300
PLAIN = "plain nbgrader autograde"


def submissions(assignment: str, count: int) -> list[NotebookNode]:
    """``count`` student notebooks: all answers, none, and the first half, in turn."""
    answers = reference_answers(nbformat.read(Course.default().source_notebook(assignment), 4))
    release = nbformat.read(Course.default().release_notebook(assignment), 4)
    answer_ids = [grade_id(cell) for cell in release.cells if is_answer_cell(cell)]
    solved = {0: answer_ids, 1: [], 2: answer_ids[: len(answer_ids) // 2]}
    return [fill_answers(release, {name: answers[name] for name in solved[index % 3]}) for index in range(count)]


def make_course(root: Path, assignment: str, count: int) -> Course:
    """A throw-away course at ``root`` with ``count`` submissions of ``assignment``."""
    course = Course.default().copy_to(root, [assignment])
    (course.root / "nbgrader_config.py").write_text(  # what the plain nbgrader command reads
        "from pathlib import Path\nfrom autograder.course.settings import configure\n"
        "configure(get_config(), Path(__file__).resolve().parent)\n"
    )
    for index, notebook in enumerate(submissions(assignment, count)):
        folder = course.grading.submitted(f"student{index:03d}", assignment)
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{assignment}.ipynb")
    return course


def plain_nbgrader(course: Course, assignment: str) -> None:
    """``nbgrader generate_assignment`` + ``nbgrader autograde`` of the whole class, as nbgrader's docs run them."""
    nbgrader = Path(sys.executable).parent / "nbgrader"  # main() put its folder first on PATH, for alembic
    for command in (["generate_assignment", assignment, "--force"], ["autograde", assignment, "--force"]):
        subprocess.run([str(nbgrader), *command], cwd=course.root, check=True, capture_output=True)


def ours(course: Course, assignment: str, jobs: int, clean_rerun: bool = True, dask_workers: int = 0) -> list[str]:
    """Grade ``course``; the phase table of its jobs (see :mod:`autograder.pipeline.commands.profile`).

    Its last column, ``one-off``, is the run's wall time less its jobs' time per worker: the
    seconds spent before and between the jobs (starting the zygotes, defining the assignment,
    timing the reference answers), which a class of 300 spreads over 300 submissions, not 20.
    """
    start = time.monotonic()
    if not dask_workers:
        results = grade(course, GradeOptions([assignment], jobs=jobs, clean_rerun=clean_rerun, progress=False))
    else:
        import distributed  # only this row needs it

        with distributed.LocalCluster(n_workers=dask_workers, threads_per_worker=1, dashboard_address=None) as cluster:
            with distributed.Client(cluster) as client:
                options = GradeOptions([assignment], jobs=dask_workers, progress=False)
                results = grade(course, options, client.get_executor())
    one_off = time.monotonic() - start - sum(r.seconds for r in results) / max(1, dask_workers or jobs)
    header, *rows = profile.phase_table(results, profile.reference_cell_seconds(course, [assignment]))
    return [f"{header} {'one-off':>9s}", *(f"{row} {one_off:9.1f}" for row in rows)]


def timed(run: Callable[[Course], list[str] | None], assignment: str, count: int) -> tuple[float, list[str] | None]:
    """Seconds ``run`` takes to grade a fresh course of ``count`` submissions of ``assignment``; what it returned."""
    with tempfile.TemporaryDirectory(prefix="benchmark-") as scratch:
        course = make_course(Path(scratch), assignment, count)
        start = time.monotonic()
        returned = run(course)
        return time.monotonic() - start, returned


def graders(assignment: str, jobs: int, dask_workers: int) -> dict[str, Callable[[Course], list[str] | None]]:
    return {
        PLAIN: lambda course: plain_nbgrader(course, assignment),
        f"grade --jobs {jobs}": lambda course: ours(course, assignment, jobs),
        f"grade --jobs {jobs} --no-clean-rerun": lambda course: ours(course, assignment, jobs, clean_rerun=False),
        f"grade on dask, {dask_workers} local workers": lambda course: ours(course, assignment, jobs, True,
                                                                             dask_workers),
    }


def hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h"


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dask-workers", type=int, default=2)
    parser.add_argument("--cluster-machines", type=int, default=10, help="for the projection (default: 10)")
    parser.add_argument("--assignment", action="append", help="only these (repeatable; default: every notebook)")
    parser.add_argument("--quick", action="store_true", help="only plain nbgrader and grade --jobs N (half the time)")
    args = parser.parse_args(argv)
    chosen = {PLAIN, f"grade --jobs {args.jobs}"} if args.quick else None
    use_this_environments_tools()  # nbgrader runs alembic by name
    per_submission: dict[str, dict[str, float]] = {}
    phase_rows: list[str] = []
    print(f"{'assignment':24s} {'grader':40s} {'seconds':>8s} {'s/submission':>13s} {'speed-up':>9s}")
    for assignment in args.assignment or Course.default().assignments():
        per_submission[assignment] = {}
        for name, run in graders(assignment, args.jobs, args.dask_workers).items():
            if chosen is not None and name not in chosen:
                continue
            seconds, table = timed(run, assignment, args.submissions)
            if table and name == f"grade --jobs {args.jobs}":
                phase_rows += table[len(phase_rows) > 0 :]  # the header once
            per_submission[assignment][name] = seconds / args.submissions
            speed_up = per_submission[assignment][PLAIN] / per_submission[assignment][name]
            print(f"{assignment:24s} {name:40s} {seconds:8.1f} {seconds / args.submissions:13.2f} {speed_up:8.2f}x",
                  flush=True)
    print(f"\nMean seconds per job and phase, grade --jobs {args.jobs} (reference: the notebook's own cell time):")
    for row in phase_rows:
        print(row)
    print(f"\nA class of {CLASS_SIZE} handing in every notebook above ({len(per_submission)}):")
    for name in graders("", args.jobs, args.dask_workers):
        if chosen is not None and name not in chosen:
            continue
        total = CLASS_SIZE * sum(rows[name] for rows in per_submission.values())
        line = f"  {name:40s} {hours(total):>8s} on this machine"
        if name != PLAIN:
            line += (
                f", {hours(total / args.cluster_machines)} on a dask cluster of {args.cluster_machines} such machines"
            )
        print(line)
    return per_submission


if __name__ == "__main__":
    main()
