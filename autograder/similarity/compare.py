"""The ``similarity`` step: every pair of a class's answers compared, per exercise and per notebook.

Each answer is fingerprinted once (:mod:`.fingerprints`, the release's own code removed), and
all pairs are scored from the fingerprint sets at once (:mod:`.scores`). A pair is *listed*
when its notebook z-score reaches :data:`LISTED_Z` or it is among the :data:`TOP_LISTED` highest
of its notebook; in a class too small to rank (:data:`.scores.MIN_STUDENTS`), a pair is listed when
the two hand in the same answer to an exercise (after the canonical form) and nobody else does. An
answer that is the reference solution itself (the same fingerprints) is listed apart, with how many
students handed in the same; and every hand-in is compared with the published reference answers as a pair is
with another student (:func:`against_reference`): a disguised copy of the reference stands out as a copied pair does.
The results are kept in ``grading/similarity.json`` (the export's ``closest match`` columns
read it); the page (:mod:`.page`) shows the listed pairs side by side.
"""

import json
import multiprocessing
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
import numpy as np

from autograder.course.course import Course
from autograder.similarity import behaviour, scores
from autograder.similarity.answers import (
    ADDED,
    ClassWork,
    exercises,
    read_class,
    reference_solutions,
    release_code,
    release_names,
)
from autograder.similarity.canonical import helpers_of
from autograder.similarity.fingerprints import Context, boilerplate_hashes, fingerprint
from autograder.similarity.signatures import Signatures, course_signatures, signatures_of

RESULTS_FILE = "similarity.json"  # in the grading folder
LISTED_Z = 3.5  # notebook z from which a pair is listed (calibrated on independent pairs: see the README)
TOP_LISTED = 5  # the highest pairs of each notebook are listed whatever their z (when above the median, z > 0)
APART_Z = 1.0  # a pair's z without its closest exercise below this: its z rests on that exercise (one_line)
CEILING_SHARE = 0.95  # where no pair can reach LISTED_Z, those this close to the ceiling are listed (see listed)


@dataclass
class Pair:
    """Two students' submissions of one notebook: how close, and how far above the class's pairs."""

    first: str
    second: str
    score: float  # Dice overlap of all their answers (added cells included)
    z: float  # robust z of the exercises' rarity evidence summed (see scores.rarity_evidence)
    exercises: dict[str, tuple[float, float]] = field(default_factory=dict)  # part -> (score, z), both answered
    shared_failures: int = 0  # failed tests both fail with the same message (see behaviour)
    failure_evidence: float = 0.0  # the sum of log(n / holders) over them
    same_alone: int = 0  # parts where the two hand in the same fingerprints and no other student does
    z_apart: float = 0.0  # the notebook z with the pair's closest exercise as alike as the median pair's


@dataclass
class ReferenceCopy:
    """An answer with the very fingerprints of the reference solution."""

    student: str
    exercise: str
    same: int  # students whose answer to this exercise is the reference's, this one included


@dataclass
class ReferenceMatch:
    """A hand-in measured against the published reference answers, as if the reference were a classmate."""

    student: str
    score: float  # Dice overlap of all its answers with the reference's
    z: float  # the notebook z of the pair (this hand-in, the reference) against the class's own pairs
    exercises: dict[str, float] = field(default_factory=dict)  # part -> score, where the hand-in answered


@dataclass
class ExerciseStats:
    pairs: int  # pairs where both answered
    median: float
    mad: float
    answered: int  # students who answered (0: an exercise the whole class skipped, an optional extra)


@dataclass
class AssignmentSimilarity:
    """Every pair's scores as numpy arrays, ranked (highest notebook z first); Python objects only on demand.

    A class of 300 has 44,850 pairs per notebook: a :class:`Pair` for each would cost more than
    scoring them. ``first[k]``, ``second[k]`` (indices into ``students``), ``score[k]`` and ``z[k]``
    are the ``k``-th ranked pair's; ``part_score[part][k]``, ``part_z[part][k]`` and
    ``part_answered[part][k]`` its exercises'.
    """

    assignment: str
    students: list[str]
    parts: list[str]  # the exercises (grade ids) and, when someone added code cells, ADDED
    first: np.ndarray
    second: np.ndarray
    score: np.ndarray
    z: np.ndarray
    part_score: dict[str, np.ndarray]
    part_z: dict[str, np.ndarray]
    part_answered: dict[str, np.ndarray]
    shared_failures: np.ndarray
    failure_evidence: np.ndarray
    stats: dict[str, ExerciseStats]
    reference_copies: list[ReferenceCopy]
    unreadable: dict[str, str]
    ceiling_z: float  # the z of two identical notebooks nobody else wrote (scores.ceiling_evidence)
    answered: int  # students who answered something: the class the notebook's z is measured in
    same_alone: np.ndarray  # per ranked pair, its parts answered alike by the two and by no other student
    z_apart: np.ndarray  # per ranked pair, its z with its closest exercise as alike as the median pair's (one_line)
    reference_score: np.ndarray  # per student, its answers' overlap with the reference's (against_reference)
    reference_z: np.ndarray  # per student, the notebook z of its pair with the reference
    reference_parts: dict[str, np.ndarray]  # per exercise, each student's overlap with the reference's answer
    reference_answers: dict[str, str]  # the published reference, per exercise (the page shows it)

    def __len__(self) -> int:
        return len(self.z)

    def pair(self, rank: int) -> Pair:
        """The pair at ``rank`` (0 for the highest)."""
        exercises = {
            part: (float(self.part_score[part][rank]), float(self.part_z[part][rank]))
            for part in self.parts
            if self.part_answered[part][rank]
        }
        first, second = self.students[self.first[rank]], self.students[self.second[rank]]
        failures = int(self.shared_failures[rank]), float(self.failure_evidence[rank]), int(self.same_alone[rank])
        return Pair(first, second, float(self.score[rank]), float(self.z[rank]), exercises, *failures,
                    float(self.z_apart[rank]))

    def top(self, count: int) -> list[Pair]:
        return [self.pair(rank) for rank in range(min(count, len(self)))]

    @property
    def too_small(self) -> bool:
        """Too few students answered for a z-score to mean anything (:func:`.scores.enough_students`)."""
        return self.answered < scores.MIN_STUDENTS

    @property
    def can_tell(self) -> bool:
        """Whether a copy can stand out here: the class is large enough and two identical notebooks nobody else
        wrote reach :data:`LISTED_Z`."""
        return not self.too_small and self.ceiling_z >= LISTED_Z

    def one_line(self) -> Pair | None:
        """A listed pair whose z rests on one exercise, as high as a listed pair alike on several; None if none.

        A pair *rests on one exercise* when, that exercise as alike as the median pair's, its z falls below
        :data:`APART_Z`: one rare answer the two share (a single line, in a short exercise) lifts it, which
        independent students do write. When such a pair reaches a pair that stands out without its closest
        exercise too (or, with none listed, :data:`LISTED_Z`), the notebook cannot tell a copy from a shared
        rare line by rank.
        """
        if self.too_small or not self.can_tell:
            return None
        count = len(self.listed())
        resting = [rank for rank in range(count) if self.z_apart[rank] < APART_Z]
        if not resting:
            return None
        standing = [float(self.z[rank]) for rank in range(count) if self.z_apart[rank] >= APART_Z]
        level = min(standing) if standing else LISTED_Z
        return self.pair(resting[0]) if self.z[resting[0]] >= level else None

    def listed(self) -> list[Pair]:
        """The pairs at :data:`LISTED_Z` or more, and the :data:`TOP_LISTED` highest (those above the median).

        In a class too small to rank (:attr:`too_small`), the pairs that hand in the same answer to an exercise
        and no other student does, those with the most such answers first. Where the notebook cannot tell a
        copy from common work (:attr:`can_tell`), only the pairs within :data:`CEILING_SHARE` of the ceiling:
        notebooks identical, with answers (nearly) nobody else wrote.
        """
        if self.too_small:
            alike = np.flatnonzero(self.same_alone)
            return [self.pair(int(rank)) for rank in alike[np.argsort(-self.same_alone[alike], kind="stable")]]
        return self.top(self.listed_count(self.z))

    def listed_count(self, z: np.ndarray) -> int:
        """How many of the highest of ``z`` are listed (:meth:`listed`, once the class is large enough to rank)."""
        if not self.can_tell:
            return int(np.count_nonzero(z >= CEILING_SHARE * self.ceiling_z))
        return max(int(np.count_nonzero(z >= LISTED_Z)), min(TOP_LISTED, int(np.count_nonzero(z > 0))))

    def reference_match(self, index: int) -> ReferenceMatch:
        """The ``index``-th student's closeness to the reference."""
        parts = {part: float(values[index]) for part, values in self.reference_parts.items() if values[index] > 0}
        return ReferenceMatch(self.students[index], float(self.reference_score[index]),
                              float(self.reference_z[index]), parts)

    def reference_matches(self) -> list[ReferenceMatch]:
        """The hand-ins closest to the published reference, listed as a pair is listed (:meth:`listed`): from
        :data:`LISTED_Z`, and the :data:`TOP_LISTED` highest above the class's median pair; where the notebook
        cannot tell, only those near the ceiling. None in a class too small to rank (its answers identical to the
        reference are listed apart, :attr:`reference_copies`)."""
        if self.too_small:
            return []
        order = np.argsort(-self.reference_z, kind="stable")[: self.listed_count(self.reference_z)]
        return [self.reference_match(int(i)) for i in order]

    def sharing_failures(self, count: int = 10) -> list[Pair]:
        """The ``count`` pairs whose shared failures are rarest (:mod:`.behaviour`), those that share any."""
        order = np.argsort(-self.failure_evidence, kind="stable")[:count]
        return [self.pair(int(rank)) for rank in order if self.failure_evidence[rank] > 0]

    def rank(self, first: str, second: str) -> int:
        """The rank (0 for the highest) of the pair of these two students."""
        i, j = sorted((self.students.index(first), self.students.index(second)))
        return int(np.flatnonzero((self.first == i) & (self.second == j))[0])

    def closest(self) -> dict[str, Pair]:
        """Each student's pair of highest notebook z-score."""
        best = np.full(len(self.students), len(self), dtype=np.int64)
        ranks = np.arange(len(self))
        np.minimum.at(best, self.first, ranks)
        np.minimum.at(best, self.second, ranks)
        return {student: self.pair(int(rank)) for student, rank in zip(self.students, best, strict=True)
                if rank < len(self)}


_FORKED: dict = {}  # what the forked fingerprinting workers read: the answers and the boilerplate


def _hash_sets(indices: range) -> list[dict[str, frozenset[int]]]:
    """Each submission's fingerprint sets; an answer handed in word for word before is fingerprinted once.

    Short answers often are (the natural one-liner, the reference pasted), and so is the stub of an
    untouched answer; the canonical form (:mod:`.canonical`) is most of an answer's cost.
    """
    work, parts, boilerplate, keep = _FORKED["work"], _FORKED["parts"], _FORKED["boilerplate"], _FORKED["keep"]
    course = _FORKED["signatures"]
    found = []
    seen: dict[tuple[str, str, str], frozenset[int]] = {}
    for i in indices:
        answers = work.submissions[i].answers
        added = answers.get(ADDED, "")
        helpers = helpers_of(added, course)  # the added cells' helper functions, inlined into the answers
        own = signatures_of(added)  # the added cells' functions and classes, whose calls are bound
        signatures = {**course, **own}
        sets = {}
        for part in parts:
            code = answers.get(part, "")
            # The student's other code, where a function this answer defines may be called (only what may matter).
            elsewhere = "\n".join(answers.get(other, "") for other in answers if other != part)
            key = (code, added if helpers or own else "", elsewhere if "def " in code else "")
            if key not in seen:
                context = Context(keep, elsewhere, signatures)
                seen[key] = frozenset(fingerprint(code, boilerplate, helpers, context=context).positions)
            sets[part] = seen[key]
        found.append(sets)
    return found


def hash_sets(
    work: ClassWork, parts: list[str], boilerplate: frozenset[int], jobs: int, signatures: Signatures
) -> list[dict]:
    """Per submission, ``{part: its fingerprint set}``; on ``jobs`` forked processes when there are many.

    Forked, so that the workers find the answers in memory instead of pickled. ``signatures``: the course's.
    """
    count = len(work.submissions)
    keep = release_names(work.release)
    _FORKED.update(work=work, parts=parts, boilerplate=boilerplate, keep=keep, signatures=signatures)
    if jobs <= 1 or count < 100 or "fork" not in multiprocessing.get_all_start_methods():
        return _hash_sets(range(count))
    step = -(-count // jobs)
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        chunks = pool.map(_hash_sets, [range(i, min(i + step, count)) for i in range(0, count, step)])
    return [sets for chunk in chunks for sets in chunk]


def compare_class(
    work: ClassWork, reference: dict[str, str], jobs: int = 1, failures: list[frozenset[str]] | None = None
) -> AssignmentSimilarity:
    """Every pair of ``work``'s submissions scored, per part and per notebook.

    ``failures``: each submission's failed tests (:func:`.behaviour.failures_of`), when graded.
    """
    signatures = course_signatures(release_code(work.release))
    boilerplate = boilerplate_hashes(release_code(work.release), signatures)
    parts = exercises(work.release)
    if any(ADDED in s.answers for s in work.submissions):
        parts.append(ADDED)
    sets = hash_sets(work, parts, boilerplate, jobs, signatures)
    students = [s.student for s in work.submissions]
    part_scores, part_z, answered, stats, rareness = {}, {}, {}, {}, {}
    for part in parts:
        column = [student_sets[part] for student_sets in sets]
        part_scores[part], rareness[part] = scores.overlaps(column)
        answered[part] = scores.answered_pairs(column)
        part_z[part], median, mad = scores.robust_z(part_scores[part], answered[part])
        stats[part] = ExerciseStats(int(answered[part].sum()), median, mad, sum(bool(hashes) for hashes in column))
    everything = [frozenset().union(*student_sets.values()) for student_sets in sets]
    notebook, _ = scores.overlaps(everything)
    per_part = {p: scores.rarity_evidence(part_scores[p], answered[p], rareness[p]) for p in parts}
    evidence = sum(per_part.values())
    combined, median, mad = scores.robust_z(evidence, scores.answered_pairs(everything), scores.EVIDENCE_MAD_FLOOR)
    yardstick = scores.MAD_SCALE * max(mad, scores.EVIDENCE_MAD_FLOOR)
    ceiling = scores.ceiling_evidence([stats[p].pairs for p in parts if p != ADDED])
    ceiling_z, apart = ((value - median) / yardstick for value in (ceiling, scores.without_closest(per_part, answered)))
    first, second = np.triu_indices(len(students), k=1)
    # Ranked by z, then score (both highest first), then the students' order (they are sorted).
    order = np.lexsort((second, first, -notebook[first, second], -combined[first, second]))
    first, second = first[order], second[order]
    references = reference_sets(reference, boilerplate, signatures)
    copies = reference_copies(students, sets, references)
    keys = {part: np.sort(scores.tie_keys(part_scores[part], rareness[part])[answered[part]]) for part in parts}
    closeness, evidence_of, by_part = against_reference(sets, references, keys)
    answering = sum(bool(hashes) for hashes in everything)
    alone = np.zeros((len(students), len(students)), dtype=np.int64)
    for part in parts:
        alone += same_alone([student_sets[part] for student_sets in sets])
    shared, evidence = behaviour.shared_failures(failures or [frozenset()] * len(students))
    return AssignmentSimilarity(
        work.assignment, students, parts, first, second, notebook[first, second], combined[first, second],
        {part: part_scores[part][first, second] for part in parts},
        {part: part_z[part][first, second] for part in parts},
        {part: answered[part][first, second] for part in parts},
        shared[first, second], evidence[first, second], stats, copies, work.unreadable, float(ceiling_z),
        answering, alone[first, second], apart[first, second],
        closeness, (evidence_of - median) / yardstick, by_part, reference,
    )


def same_alone(column: list[frozenset[int]]) -> np.ndarray:
    """``same[i, j]``: 1 where students i and j hand in the same answer (fingerprints), and no other student does."""
    holders: dict[frozenset[int], list[int]] = {}
    for student, hashes in enumerate(column):
        if hashes:
            holders.setdefault(hashes, []).append(student)
    same = np.zeros((len(column), len(column)), dtype=np.int64)
    for first, second in (students for students in holders.values() if len(students) == 2):
        same[first, second] = same[second, first] = 1
    return same


def reference_sets(
    reference: dict[str, str], boilerplate: frozenset[int], signatures: Signatures
) -> dict[str, frozenset[int]]:
    """The reference answers' fingerprint sets, per exercise (``signatures``: the course's, as the answers are
    bound to)."""
    context = Context(None, "", signatures)
    return {
        part: frozenset(fingerprint(code, boilerplate, context=context).positions) for part, code in reference.items()
    }


def against_reference(
    sets: list[dict[str, frozenset[int]]], references: dict[str, frozenset[int]], keys: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Each hand-in against the published reference, scored as a pair of the class is: per exercise, the
    weighted Dice overlap with the reference's answer (the reference counted as one more holder of its
    fingerprints) turned into rarity evidence among the class's own pairs of that exercise (``keys``: their sorted
    :func:`.scores.tie_keys`), summed over the exercises the hand-in answered.

    Returns each hand-in's notebook overlap with the reference, its summed evidence (to be made a z-score with the
    class's pairs' median and MAD) and, per exercise, its overlap. Answers are public once the course is: a
    reworded copy of the published answer then stands as far above the class as a copied classmate's would.
    """
    count = len(sets)
    evidence, by_part = np.zeros(count), {}
    for part, outside in references.items():
        if not outside or part not in keys:
            continue
        column = [student_sets.get(part, frozenset()) for student_sets in sets]
        score, rareness = scores.against_one(column, outside)
        answered = np.array([bool(hashes) for hashes in column])
        evidence += np.where(answered, scores.evidence_among(keys[part], scores.tie_keys(score, rareness), score), 0)
        by_part[part] = np.where(answered, score, 0.0)
    everything = [frozenset().union(*student_sets.values()) for student_sets in sets]
    notebook, _ = scores.against_one(everything, frozenset().union(*references.values()))
    return notebook, evidence, by_part


def reference_copies(
    students: list[str], sets: list[dict[str, frozenset[int]]], references: dict[str, frozenset[int]]
) -> list[ReferenceCopy]:
    """The answers whose fingerprints are the reference answer's, exercise by exercise."""
    found = []
    for exercise, expected in references.items():
        same = [
            s
            for s, student_sets in zip(students, sets, strict=True)
            if expected and student_sets.get(exercise) == expected
        ]
        found += [ReferenceCopy(student, exercise, len(same)) for student in same]
    return found


def compare_assignment(course: Course, assignment: str, jobs: int = 1) -> tuple[AssignmentSimilarity, ClassWork]:
    """One assignment's class compared, and what it handed in (the page shows it)."""
    source = nbformat.read(course.source_notebook(assignment), as_version=4)
    work = read_class(course, assignment)
    failures = [behaviour.failures_of(course, assignment, s.student) for s in work.submissions]
    return compare_class(work, reference_solutions(source), jobs, failures), work


def handed_in(course: Course, assignments: Iterable[str] | None = None) -> list[str]:
    """The assignments (all, or those named) that someone handed in."""
    found = {path.name for path in course.grading.submitted().glob("*/*") if path.is_dir()}
    return [a for a in (assignments or course.assignments()) if a in found]


def results_path(course: Course) -> Path:
    return course.grading.file(RESULTS_FILE)


def save(course: Course, results: list[AssignmentSimilarity], top: int = 200) -> Path:
    """Keep each assignment's listed pairs (at least its ``top`` highest) and every student's closest match."""
    kept = {
        result.assignment: {
            "students": result.students,
            "stats": {part: asdict(stats) for part, stats in result.stats.items()},
            "pairs": [asdict(pair) for pair in result.top(max(top, len(result.listed())))],
            "closest": {student: asdict(pair) for student, pair in result.closest().items()},
            "reference_copies": [asdict(copy) for copy in result.reference_copies],
            "reference_matches": [asdict(match) for match in result.reference_matches()],
            "reference": {
                student: {"score": round(float(score), 3), "z": None if result.too_small else round(float(z), 1)}
                for student, score, z in zip(result.students, result.reference_score, result.reference_z, strict=True)
            },
            "ceiling_z": result.ceiling_z,
            "can_tell": result.can_tell,
            "too_small": result.too_small,
            "sharing_failures": [asdict(pair) for pair in result.sharing_failures()],
            "unreadable": result.unreadable,
        }
        for result in results
    }
    path = results_path(course)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"listed_z": LISTED_Z, "top_listed": TOP_LISTED, "assignments": kept}, indent=1))
    return path


def last_run(course: Course) -> dict[str, dict]:
    """The last run's results per assignment, as :func:`save` wrote them; empty when there was none."""
    path = results_path(course)
    return json.loads(path.read_text())["assignments"] if path.exists() else {}


def reference_closeness(course: Course) -> dict[tuple[str, str], dict]:
    """``{(assignment, student): {"score", "z"}}``: each hand-in against the published reference, from the last run
    (``z`` None in a class too small to rank); empty when there was none."""
    return {(a, student): match for a, result in last_run(course).items()
            for student, match in result.get("reference", {}).items()}


def closest_matches(course: Course) -> dict[tuple[str, str], dict]:
    """``{(assignment, student): {"match", "score", "z"}}`` from the last run; empty when there was none.

    In a class too small to rank (:attr:`AssignmentSimilarity.too_small`) a z-score measures nothing, so
    ``z`` is None there.
    """
    return {
        (assignment, student): {
            "match": pair["second"] if pair["first"] == student else pair["first"],
            "score": round(pair["score"], 3),
            "z": None if result.get("too_small") else round(pair["z"], 1),
        }
        for assignment, result in last_run(course).items()
        for student, pair in result["closest"].items()
    }
