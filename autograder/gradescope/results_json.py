"""A graded submission as Gradescope's ``results.json`` ("Output format" of the Autograder Specifications,
https://gradescope-autograders.readthedocs.io/en/latest/specs/).

One test per graded cell, with its points and its failure message scrubbed of hidden-test lines (never a test's
source); the optional exercises' tests with ``max_score`` 0, so their points come on top of the maximum; each
written answer as a test of 0 points that says it is graded by hand. A flagged submission's results wait for the
instructor (``after_published``), as its feedback page waits for a release in the course's own pipeline.
"""

from autograder.pipeline.commands.feedback import Secrets
from autograder.pipeline.storage.gradebook import GradeCellInfo
from autograder.pipeline.storage.results import Status, SubmissionResult

VISIBLE, AFTER_PUBLISHED = "visible", "after_published"
BY_HAND = "graded by hand"


def test_entry(result: SubmissionResult, index: int, secrets: Secrets) -> dict:
    test = result.tests[index]
    extra = " (extra credit)" if test.extra_credit else ""
    output = secrets.scrub(test.message) if test.message else ("passed" if test.score >= test.max_score else "")
    return {
        "name": f"{test.notebook}: {test.grade_id}{extra}",
        "score": test.score,
        "max_score": 0.0 if test.extra_credit else test.max_score,
        "output": output or "failed",
        "visibility": VISIBLE,
        "extra_data": {"grade_id": test.grade_id, "extra_credit": test.extra_credit, "points": test.max_score},
    }


def by_hand_entry(cell: GradeCellInfo) -> dict:
    return {
        "name": f"{cell.notebook}: {cell.grade_id} ({BY_HAND})",
        "score": 0.0,
        "max_score": 0.0,
        "output": f"A written answer, {BY_HAND} by the instructor ({cell.max_score:g} points, not in this score).",
        "visibility": VISIBLE,
        "extra_data": {"grade_id": cell.grade_id, BY_HAND.replace(" ", "_"): True, "points": cell.max_score},
    }


def summary(result: SubmissionResult, secrets: Secrets, notes: list[str]) -> str:
    lines = [f"Status: {result.status}"]
    if result.reason:
        lines.append(f"Note: {secrets.scrub(result.reason)}")
    lines += notes
    if result.flags:
        lines.append("Checks that need a look by the instructor:")
        lines += [f"- {secrets.scrub(flag)}" for flag in result.flags]
    return "\n".join(lines)


def results_json(result: SubmissionResult, cells: list[GradeCellInfo], secrets: Secrets, notes: list[str]) -> dict:
    """``result`` as results.json; ``cells`` are the assignment's grade cells (for the written answers), ``notes``
    extra lines for the summary (which file was taken)."""
    tests = [test_entry(result, index, secrets) for index in range(len(result.tests))]
    tests += [by_hand_entry(cell) for cell in cells if not cell.autograded]
    return {
        "score": result.score,
        "execution_time": round(result.seconds),
        "output": summary(result, secrets, notes),
        "visibility": AFTER_PUBLISHED if result.status == Status.FLAGGED else VISIBLE,
        "stdout_visibility": "hidden",  # the grader's log, for the instructor
        "extra_data": {
            "status": str(result.status),
            "flags": [secrets.scrub(flag) for flag in result.flags],
            "repairs": result.repairs,
            "phases": result.phases,
        },
        "tests": tests,
    }
