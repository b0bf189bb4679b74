"""The margins of the planted-copy classes: how far each notebook's lowest copy lies above its best independent pair.

``python -m testbed.similarity_margins [--design uniform popular] [--assignment 02_multi_head_attention]``
builds :func:`.similarity_class.build_disguised_class` per notebook and class design, compares it in memory
(no course on disk: the grader's results play no part in the text's z) and prints, per notebook and design,
the lowest copy's z, the best independent pair's z, the margin, the copies ranked below that pair, and the rank of
the two identical notebooks and how many pairs the report lists.
"""

import argparse
from dataclasses import dataclass

import nbformat

from autograder.course.settings import release_notebook, source_notebook
from autograder.similarity.answers import ADDED, ClassWork, Submission, reference_solutions
from autograder.similarity.compare import AssignmentSimilarity, compare_class
from testbed.similarity_class import (
    DESIGNS,
    SimilarityClass,
    build_disguised_class,
    build_reference_copy_class,
)

ASSIGNMENTS = ("01_attention", "02_multi_head_attention", "03_positional_encoding", "04_encoder",
               "05_encoder_decoder", "06_ag_news_classifier", "07_language_model")


@dataclass
class Margin:
    lowest: float  # the lowest planted copy's z
    best: float  # the best independent pair's z
    below: dict[str, int]  # families of the copies ranked below the best independent pair -> their rank (1 first)
    pairs: int
    weakest: str  # the lowest copy's families
    verbatim: int = 0  # the rank of the two identical notebooks (1 first; 0 for none, against the reference)
    listed: int = 0  # how many pairs the report lists (AssignmentSimilarity.listed)

    @property
    def margin(self) -> float:
        return self.lowest - self.best


def class_work(made: SimilarityClass) -> ClassWork:
    release = nbformat.read(release_notebook(made.assignment), as_version=4)
    submissions = [
        Submission(student, {**answers, **({ADDED: made.added[student]} if student in made.added else {})})
        for student, answers in made.answers.items()
    ]
    return ClassWork(made.assignment, release, submissions, {})


def margin(made: SimilarityClass, result: AssignmentSimilarity) -> Margin:
    ranks = {copier: result.rank(*sorted((copier, made.source[copier]))) for copier in made.families}
    verbatim = result.rank(*made.verbatim)
    best = next(rank for rank in range(len(result)) if rank not in {*ranks.values(), verbatim})
    below = {"+".join(made.families[c]): rank + 1 for c, rank in ranks.items() if rank > best}
    lowest = max(ranks, key=ranks.get)
    return Margin(float(result.z[ranks[lowest]]), float(result.z[best]), below, len(result),
                  "+".join(made.families[lowest]), verbatim + 1, len(result.listed()))


def measure(assignment: str, design: str, students: int = 30) -> tuple[Margin, AssignmentSimilarity]:
    made = build_disguised_class(assignment, students, design=design)
    result = compare_class(class_work(made), {})
    return margin(made, result), result


def reference_margin(assignment: str, design: str, students: int = 30) -> tuple[Margin, AssignmentSimilarity]:
    """How far the lowest disguised copy of the published reference lies above the independent student closest to
    it (:func:`.similarity_class.build_reference_copy_class`), by each hand-in's z against the reference."""
    made = build_reference_copy_class(assignment, students, design=design)
    source = nbformat.read(source_notebook(assignment), as_version=4)
    result = compare_class(class_work(made), reference_solutions(source))
    z = dict(zip(result.students, result.reference_z.tolist(), strict=True))
    order = sorted(z, key=lambda student: -z[student])
    best = next(student for student in order if student not in made.families)
    below = {"+".join(made.families[c]): order.index(c) + 1 for c in made.families if z[c] <= z[best]}
    lowest = min(made.families, key=z.get)
    return Margin(z[lowest], z[best], below, len(order), "+".join(made.families[lowest])), result


def main(argv: list[str] | None = None) -> None:
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--design", nargs="+", default=list(DESIGNS), choices=DESIGNS)
    options.add_argument("--assignment", nargs="+", default=list(ASSIGNMENTS))
    options.add_argument("--reference", action="store_true", help="disguised copies of the published reference")
    args = options.parse_args(argv)
    for design in args.design:
        for assignment in args.assignment:
            found, result = (reference_margin if args.reference else measure)(assignment, design)
            print(f"{design} {assignment}: lowest copy z {found.lowest:.2f}, best independent z {found.best:.2f}, "
                  f"margin {found.margin:+.2f}, ceiling z {result.ceiling_z:.2f}, one line "
                  f"{result.one_line() is not None}, lowest {found.weakest}, below {found.below or 'none'} "
                  f"(of {found.pairs} {'hand-ins' if args.reference else 'pairs'})"
                  + ("" if args.reference else f", identical notebooks rank {found.verbatim}, {found.listed} listed"),
                  flush=True)


if __name__ == "__main__":
    main()

