"""Benchmark: ``python -m autograder similarity`` on a generated class, every notebook.

Usage: ``python -m benchmarks.similarity [--students 300] [--jobs 2] [--distinct]``. Builds a throw-away course
holding, for every notebook, ``--students`` independent students made from the test suite's
variants (``testbed/similarity_class.py``) plus a few planted copies, then times the whole
command (reading, fingerprinting, scoring, the JSON and the page) and prints seconds per notebook.

The generated students hand in the pool's answers word for word, which the command fingerprints
once each; a real class repeats fewer. ``--distinct`` adds a comment naming the student to every
answer, so that no two are alike as text and every answer is fingerprinted: the worst case.
"""

import argparse
import resource
import tempfile
import time
from pathlib import Path

from autograder.cli import main as cli
from autograder.course.course import Course
from testbed.similarity_class import build_class, hand_in


def cpu_seconds() -> float:
    """User and system CPU time of this process and of its children that have ended (the forked workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> float:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--students", type=int, default=300)
    options.add_argument("--jobs", type=int, default=2)
    options.add_argument("--distinct", action="store_true", help="no two answers alike as text (the worst case)")
    args = options.parse_args(argv)
    assignments = Course.default().assignments()
    with tempfile.TemporaryDirectory() as folder:
        course = Course.default().copy_to(Path(folder), assignments)
        for assignment in assignments:
            made = build_class(assignment, args.students, copies=5)
            if args.distinct:
                for student, answers in made.answers.items():
                    made.answers[student] = {k: f"{v}\n# {student}\n" if v else v for k, v in answers.items()}
            hand_in(course, made)
        start, cpu = time.perf_counter(), cpu_seconds()
        cli(["--root", folder, "similarity", "--jobs", str(args.jobs), "--output", f"{folder}/similarity.html"])
        seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    kind = ", every answer distinct" if args.distinct else ""
    print(f"{args.students} students x {len(assignments)} notebooks{kind}: {seconds:.1f} s with --jobs {args.jobs}, "
          f"{cpu:.1f} s of CPU (this process and its workers; wall time depends on the load)")
    return seconds


if __name__ == "__main__":
    main()
