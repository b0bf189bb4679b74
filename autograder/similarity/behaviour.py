"""Shared wrong behaviour as evidence of its own: the hidden tests two answers fail, with the same message.

A copy computes what its source computes, mistakes included, through any disguise (docs/similarity.md,
"What is compared", 6. Shared wrong behaviour). A *failure* is a (test, first line of its message) pair
from the grader's own results (:mod:`autograder.pipeline.storage.results`); the message stands for the
wrong output on the test's fixed inputs. A pair's evidence is the sum, over the failures both hold, of
log(n / holders): two students of 300 sharing one add log(150) = 5.0, half the class log(2) = 0.7.
"""

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from autograder.course.course import Course
from autograder.pipeline.storage.results import Status, load_result

UNANSWERED = "NotImplementedError"  # the release's stub: blank answers all fail alike


def failures_of(course: Course, assignment: str, student: str) -> frozenset[str]:
    """The (test, first line of the message) failures of a graded submission; empty when none or not graded."""
    result = load_result(course, assignment, student)
    if result is None or result.status not in (Status.GRADED, Status.FLAGGED):
        return frozenset()
    found = set()
    for test in result.tests:
        message = test.message.splitlines()[0] if test.message else ""
        if test.score < test.max_score and UNANSWERED not in message:
            found.add(f"{test.notebook}:{test.grade_id}\n{message}")
    return frozenset(found)


def shared_failures(failures: Sequence[frozenset[str]]) -> tuple[np.ndarray, np.ndarray]:
    """``(count[i, j], evidence[i, j])``: the failures two students share, and the sum of log(n / holders) over them."""
    students = len(failures)
    holders = Counter(failure for held in failures for failure in held)
    shared = sorted(failure for failure, count in holders.items() if count >= 2)
    column = {failure: index for index, failure in enumerate(shared)}
    incidence = np.zeros((students, len(shared)))
    for student, held in enumerate(failures):
        incidence[student, [column[f] for f in held if f in column]] = 1.0
    weights = np.array([math.log(students / holders[f]) for f in shared])
    count = incidence @ incidence.T
    evidence = np.round((incidence * weights) @ incidence.T, 9)
    np.fill_diagonal(count, 0)
    np.fill_diagonal(evidence, 0.0)
    return count.astype(np.int64), evidence
