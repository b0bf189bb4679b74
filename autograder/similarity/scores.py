"""Pair scores for a whole class at once, and how far each lies above the class's own pairs.

A pair's score on one exercise is the Dice overlap of the two answers' fingerprint sets,
2|A ∩ B| / (|A| + |B|): 1 for the same code, 0 for nothing in common or an empty answer. The
shared counts of all pairs come from one matrix product over the hashes that at least two
students hold (an inverted index from hash to students), so the cost grows with the pairs'
count (n²) only in that product, never in Python.

Short exercises have one natural answer that half the class writes, so a raw score says little;
what matters is how far a pair lies above the other pairs of the same exercise. That distance is
a robust z-score, (score - median) / (1.4826 · MAD), the median absolute deviation standing in
for the standard deviation (1.4826 makes them equal for normal data) so that the copies being
looked for do not widen the yardstick. Only pairs where both students answered count: an
empty or untouched answer is no evidence either way. The MAD has a floor, :data:`MAD_FLOOR`:
where the whole class writes the same few lines (MAD near 0), a pair a little above the median
would otherwise lie "infinitely" far out.

A notebook's score combines its exercises by how *rare* each exercise's closeness is: the
share p of the exercise's pairs that score at least as high, turned into a normal quantile
Φ⁻¹(1 - p) and summed over the exercises both students answered (Stouffer's way of combining
evidence). Identical answers to an exercise that a third of the class answers identically add
little (0.4); the same on an exercise where nobody else agrees adds much (up to about 3).
Stouffer's sum, unlike Fisher's sum of -log p (tried first), does not let one exercise's
extreme p outweigh the others: being close on every exercise, as a copy is, beats being
identical on most and apart on one, as independent students who drew the same common answers
are. The robust z-score of that sum against all the notebook's pairs is the notebook's
z-score, the one pairs are ranked and listed by. Weighting the robust z-scores themselves
instead let short exercises (a MAD at its floor) outweigh long ones.

Each fingerprint also counts by how rare it is in the class, log(n / students holding it),
so that the natural answer everyone types weighs little against what only two students share.

A copy's answers are the same on every exercise (once :mod:`.canonical` has undone its
disguises); independent students who drew the same answers on most exercises differ on the
rest. So each exercise's evidence also loses :data:`MISMATCH` times the share the two answers do
*not* hold in common, 1 - score: 3 for answers with nothing in common, about what the rarest
closeness in a class gains (Φ⁻¹ of the top 0.1 %). Matching on every exercise then beats
matching on most, however rare the most.

A class can be too small for any of this (:data:`MIN_STUDENTS`): the median and the MAD are set
by the majority of the pairs, and in a small class most pairs share a student with the pair being
judged, so they are not the independent work it is measured against.
"""

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

MAD_FLOOR = 0.05  # score units: spreads below 5 % of overlap are what re-typing one natural answer gives
MISMATCH = 3.0  # what a pair loses on an exercise where its answers share nothing (see rarity_evidence)
EVIDENCE_MAD_FLOOR = 0.5  # for the notebook's combined evidence (a sum of normal quantiles)
NORMAL = NormalDist()
TIE_SCALE = 1e-11  # rareness (at most log n, rounded to 1e-6) times this stays below the scores' rounding (1e-9)
MAD_SCALE = 1.4826  # MAD -> standard deviation for normal data
BREAKDOWN = 0.5  # the median's and the MAD's breakdown point: the share of the values they can ignore


def pair_count(students: int) -> int:
    return students * (students - 1) // 2


def enough_students(students: int) -> bool:
    """Whether the pairs two students are not in outnumber, past the robust z's breakdown point, those they are in.

    A pair's z is its distance from the median of all the class's pairs, in MADs. Of the n(n-1)/2
    pairs, 2(n-2) + 1 hold one of the pair's two students; when these are a majority, they set the
    median and the MAD, and they are not independent of the pair: a copier's pairs with the rest of
    the class repeat the original's. Only when the (n-2)(n-3)/2 pairs of the other students are more
    than :data:`BREAKDOWN` of all pairs is a pair measured against independent work.
    """
    return pair_count(students - 2) > BREAKDOWN * pair_count(students)


MIN_STUDENTS = next(n for n in itertools.count(2) if enough_students(n))  # 8 (15 of 28 pairs; 7 has 10 of 21)


def rarity(sets: Sequence[set[int]]) -> dict[int, float]:
    """Each hash's weight, log(n / how many students hold it): 0 for a hash everyone holds."""
    holders = Counter(value for hashes in sets for value in hashes)
    return {value: math.log(len(sets) / count) for value, count in holders.items()}


def overlaps(sets: Sequence[set[int]]) -> tuple[np.ndarray, np.ndarray]:
    """``scores[i, j]``, the weighted Dice overlap 2 w(A ∩ B) / (w(A) + w(B)) (0 where either is empty), and
    ``rareness[i, j]``, the mean weight of the hashes two answers share (0 for none).

    Two identical answers score 1 whether half the class wrote them or nobody else did; how rare
    what they share is tells those apart (log n/2 for an answer only these two wrote).
    """
    weights = rarity(sets)
    shared = sorted(value for value in weights if weights[value] < math.log(len(sets)))  # held by two or more
    column = {value: index for index, value in enumerate(shared)}
    incidence = np.zeros((len(sets), len(shared)), dtype=np.float64)
    for student, hashes in enumerate(sets):
        incidence[student, [column[value] for value in hashes if value in column]] = 1.0
    counts = (incidence * np.array([weights[value] for value in shared])) @ incidence.T
    # float even where every set is empty (an exercise nobody answered), where the sums are the integer 0
    sizes = np.array([sum(weights[value] for value in hashes) for hashes in sets], dtype=np.float64)
    total = sizes[:, None] + sizes[None, :]
    overlap = np.divide(2 * counts, total, out=np.zeros_like(total), where=total > 0)
    # Rounded: the same sets summed in another order differ in the last bits, and a tie split by rounding
    # noise would rank one identical pair above another.
    overlap = np.round(overlap, 9)
    np.fill_diagonal(overlap, 0.0)
    common = incidence @ incidence.T
    rareness = np.round(np.divide(counts, common, out=np.zeros_like(counts), where=common > 0), 6)
    np.fill_diagonal(rareness, 0.0)
    return overlap, rareness


def answered_pairs(sets: Sequence[set[int]]) -> np.ndarray:
    """``mask[i, j]``: both students answered (non-empty sets), i < j (each pair once)."""
    answered = np.array([len(hashes) > 0 for hashes in sets])
    return np.triu(np.outer(answered, answered), k=1)


def robust_z(scores: np.ndarray, pairs: np.ndarray, floor: float = MAD_FLOOR) -> tuple[np.ndarray, float, float]:
    """The z-score of every pair against the pairs in ``pairs`` (0 outside them), the median and the MAD."""
    values = scores[pairs]
    if values.size == 0:
        return np.zeros_like(scores), 0.0, 0.0
    median = float(np.median(values))
    mad = float(np.median(np.abs(values - median)))
    z = (scores - median) / (MAD_SCALE * max(mad, floor))
    return np.where(pairs | pairs.T, z, 0.0), median, mad


def rarity_evidence(scores: np.ndarray, pairs: np.ndarray, rareness: np.ndarray | None = None) -> np.ndarray:
    """How rare this closeness is among the exercise's pairs, as a normal quantile (Stouffer's z).

    p is the share of the exercise's pairs that score at least as high, counting the pair itself
    as half (the mid-p: a tie with everyone is p = 1/2, no evidence), and the evidence is
    ``Φ⁻¹(1 - p)``: 0 at the median, 2.3 for the top 1 %, 3.1 for the top 0.1 %, less
    ``MISMATCH · (1 - score)`` for what the two answers do not share. Pairs of equal score are
    ranked by ``rareness`` (:func:`overlaps`): identical answers nobody else wrote are rarer than
    the one-liner half the class typed.
    """
    keys = tie_keys(scores, rareness)
    return np.where(pairs | pairs.T, evidence_among(np.sort(keys[pairs]), keys, scores), 0.0)


def tie_keys(scores: np.ndarray, rareness: np.ndarray | None) -> np.ndarray:
    """The scores, equal ones ranked by ``rareness`` (below the scores' rounding, so it only breaks ties)."""
    return scores if rareness is None else scores + rareness * TIE_SCALE


def evidence_among(values: np.ndarray, keys: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """:func:`rarity_evidence` of ``keys`` (:func:`tie_keys` of ``scores``) measured among the sorted pair keys
    ``values``: the class's own pairs, or (for a hand-in against the published reference) the pairs it is
    compared with."""
    if values.size == 0:
        return np.zeros_like(scores)
    at_least = values.size - np.searchsorted(values, keys, side="left")
    share = np.clip((at_least - 0.5) / values.size, 0.5 / values.size, 1 - 0.5 / values.size)
    unique, where = np.unique(share, return_inverse=True)
    evidence = np.array([-NORMAL.inv_cdf(p) for p in unique.tolist()])[where].reshape(scores.shape)
    return evidence - MISMATCH * (1 - scores)


def against_one(sets: Sequence[frozenset[int]], outside: frozenset[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each answer's weighted Dice overlap with one answer from outside the class (the published reference), and
    the mean weight of what the two share: :func:`overlaps`' row for ``outside`` had it been handed in too."""
    weights = rarity([*sets, outside])
    outside_size = sum(weights[value] for value in outside)
    score, rareness = np.zeros(len(sets)), np.zeros(len(sets))
    for index, hashes in enumerate(sets):
        shared = hashes & outside
        total = sum(weights[value] for value in hashes) + outside_size
        common = sum(weights[value] for value in shared)
        score[index] = round(2 * common / total, 9) if total > 0 else 0.0
        rareness[index] = round(common / len(shared), 6) if shared else 0.0
    return score, rareness


def ceiling_evidence(answered_pairs: Sequence[int]) -> float:
    """The evidence of two notebooks identical on every exercise, with answers nobody else wrote.

    ``answered_pairs``: per exercise, how many pairs both answered. Such a pair is alone at the top
    of each exercise (p = 1/2 of one pair among them, the mid-p), so it holds the most evidence a
    pair can: if that is not far above the class, no pair of this notebook can be.
    """
    return sum(-NORMAL.inv_cdf(0.5 / count) for count in answered_pairs if count > 0)


def without_closest(evidence: dict[str, np.ndarray], answered: dict[str, np.ndarray]) -> np.ndarray:
    """Each pair's summed evidence with its closest exercise (the one it gains most on) at that exercise's median
    pair: how alike the two are apart from one answer. ``evidence``: per exercise, :func:`rarity_evidence`;
    ``answered``: per exercise, :func:`answered_pairs`."""
    gains = []
    for part, values in evidence.items():
        both = answered[part] | answered[part].T
        typical = float(np.median(values[answered[part]])) if answered[part].any() else 0.0
        gains.append(np.where(both, values - typical, 0.0))
    total = sum(evidence.values())
    return total - np.max(np.stack(gains), axis=0) if gains else total
