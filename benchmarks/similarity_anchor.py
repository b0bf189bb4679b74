"""Benchmark: the similarity report beside an established detector, Dolos, on the same generated classes.

Usage: ``python -m benchmarks.similarity_anchor [--students 30] [--seed 0] [--dolos DIR]``. For every
notebook it builds the class of the disguised-copy test (``build_disguised_class``: independent
students, one copy per disguise family alone and three at a time, and a verbatim copy of answers
nobody else wrote), ranks its pairs with ``autograder.similarity`` and with Dolos (the
``@dodona/dolos-lib`` package pinned in benchmarks/dolos/package.json, run by Node from ``DIR``,
the folder that holds its ``node_modules``: benchmarks/dolos/ after ``make similarity-anchor``'s
``npm ci`` and ``npm rebuild`` of its tree-sitter parsers), and prints, per copy, each tool's
rank and score and the copy's shared-failure evidence (from the class's generated grader results), and each tool's best
independent pair. Dolos reads each student's notebook as one Python file (the answers, then any
added cells) with the release's code as its template to ignore.
"""

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

import nbformat
import numpy as np

from autograder.course.course import Course
from autograder.course.settings import REPO_ROOT, release_notebook
from autograder.similarity.answers import release_code
from autograder.similarity.compare import compare_assignment
from testbed.similarity_class import SimilarityClass, build_disguised_class, hand_in

DOLOS = """
import { Dolos } from "@dodona/dolos-lib";
const [template, ...files] = process.argv.slice(1);
const report = await new Dolos({ language: "python" }).analyzePaths(files, template);
const pairs = report.allPairs().map(p => [p.leftFile.path, p.rightFile.path, p.similarity]);
console.log(JSON.stringify(pairs));
"""


def student_files(made: SimilarityClass, folder: Path) -> tuple[Path, list[Path]]:
    """Each student's answers as one Python file, and the release's code as the template."""
    release = nbformat.read(release_notebook(made.assignment), as_version=4)
    template = folder / "template.py"
    template.write_text(release_code(release))
    files = []
    for student, answers in made.answers.items():
        path = folder / f"{student}.py"
        path.write_text("\n\n".join([*answers.values(), made.added.get(student, "")]))
        files.append(path)
    return template, files


def dolos_ranks(made: SimilarityClass, dolos: Path) -> tuple[dict[frozenset[str], tuple[int, float]], float]:
    """Dolos's rank (1 for the highest) and similarity of every pair, and the best independent pair's similarity."""
    with tempfile.TemporaryDirectory() as folder:
        template, files = student_files(made, Path(folder))
        command = ["node", "--input-type=module", "-e", DOLOS, str(template), *map(str, files)]
        output = subprocess.run(command, cwd=dolos, capture_output=True, text=True, check=True).stdout
    pairs = sorted(json.loads(output), key=lambda p: -p[2])
    found = {frozenset(Path(p).stem for p in pair[:2]): (rank, pair[2]) for rank, pair in enumerate(pairs, 1)}
    best = next(s for (a, b, s) in pairs if frozenset((Path(a).stem, Path(b).stem)) not in made.copies)
    return found, best


def main(argv: list[str] | None = None) -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--students", type=int, default=30)
    options.add_argument("--seed", type=int, default=0)
    dolos = REPO_ROOT / "benchmarks" / "dolos"
    options.add_argument("--dolos", type=Path, default=dolos, help="the folder whose node_modules holds Dolos")
    args = options.parse_args(argv)
    print("notebook | disguise | ours: rank, z | shared failures: evidence | Dolos: rank, similarity")
    for assignment in Course.default().assignments():
        made = build_disguised_class(assignment, args.students, args.seed)
        with tempfile.TemporaryDirectory() as folder:
            course = Course.default().copy_to(Path(folder), [assignment])
            hand_in(course, made)
            result, _ = compare_assignment(course, assignment)
        theirs, their_best = dolos_ranks(made, args.dolos)
        copies = {**{c: (made.source[c], "+".join(f)) for c, f in made.families.items()},
                  made.verbatim[1]: (made.verbatim[0], "verbatim, answers nobody else wrote")}
        planted = {result.rank(*sorted((c, s))) for c, (s, _) in copies.items()}
        best = next(rank for rank in range(len(result)) if rank not in planted)
        for copier, (source, name) in copies.items():
            rank = result.rank(*sorted((copier, source)))
            their_rank, similarity = theirs[frozenset((copier, source))]
            evidence = result.failure_evidence[rank]
            ours = f"{rank + 1}, {result.z[rank]:.2f}"
            print(f"{assignment} | {name} | {ours} | {evidence:.1f} | {their_rank}, {similarity:.3f}")
        independent = np.array([rank not in planted for rank in range(len(result))])
        failing = result.failure_evidence[independent]
        print(
            f"{assignment} | best independent pair | {best + 1}, {result.z[best]:.2f} | highest {failing.max():.1f}, "
            f"{np.count_nonzero(failing > 0)} of {failing.size} share any | -, {their_best:.3f}"
        )


if __name__ == "__main__":
    main()
