"""Benchmark: ``python -m autograder similarity`` on a generated class, every notebook.

Usage: ``python -m benchmarks.similarity [--students 300] [--jobs 2]``. Builds a throw-away course
holding, for every notebook, ``--students`` independent students made from the test suite's
variants (``tests/support/similarity_class.py``) plus a few planted copies, then times the whole
command (reading, fingerprinting, scoring, the JSON and the page) and prints seconds per notebook.
"""

import argparse
import tempfile
import time
from pathlib import Path

from autograder.cli import main as cli
from autograder.course.course import Course
from tests.support.similarity_class import build_class, hand_in


def main(argv: list[str] | None = None) -> float:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--students", type=int, default=300)
    options.add_argument("--jobs", type=int, default=2)
    args = options.parse_args(argv)
    assignments = Course.default().assignments()
    with tempfile.TemporaryDirectory() as folder:
        course = Course.default().copy_to(Path(folder), assignments)
        for assignment in assignments:
            hand_in(course, build_class(assignment, args.students, copies=5))
        start = time.perf_counter()
        cli(["--root", folder, "similarity", "--jobs", str(args.jobs), "--output", f"{folder}/similarity.html"])
        seconds = time.perf_counter() - start
    print(f"{args.students} students x {len(assignments)} notebooks: {seconds:.1f} s with --jobs {args.jobs}")
    return seconds


if __name__ == "__main__":
    main()
