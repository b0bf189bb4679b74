"""The last step of a job: each test's points and reason, from the kernel run and the clean re-run, and the
submission's status."""

import re

from autograder.pipeline.feedback_text import CLEAN_RERUN
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.kernel_run import KernelRun, failure_messages
from autograder.pipeline.storage.results import Status, SubmissionResult

ERROR_LINE = re.compile(r"^[\w.]*(Error|Exception|Interrupt)\b.*:")


def timeout_reason(job: GradeJob, notebook: str, test: str, message: str) -> str:
    """A kernel-run failure message, with the limit a cell that timed out ran into."""
    if not message.startswith("CellTimeoutError") or job.cell_limits is None:
        return message
    return f"CellTimeoutError: no answer within the cell's limit ({job.cell_limits.describe(notebook, test)})"

def award(job: GradeJob, result: SubmissionResult, kernel: KernelRun, clean: dict[str, dict[str, dict]]) -> None:
    """Each test's score and reason: the kernel's score unless the clean re-run failed it.

    When the kernel run did not finish, a test scores what the clean re-run gives it.
    """
    messages = {name: failure_messages(notebook) for name, notebook in kernel.autograded.items()}
    for test in result.tests:
        verdict = clean.get(test.notebook, {}).get(test.grade_id)
        test.clean_passed = None if verdict is None else verdict["passed"]
        if not kernel.finished:
            test.kernel_score = 0.0
            test.score = test.max_score if test.clean_passed else 0.0
            why = verdict["message"] if verdict else "no result"
            test.message = "" if test.clean_passed else f"{CLEAN_RERUN}{why}"
            continue
        test.kernel_score = min(test.max_score, kernel.scores.get((test.notebook, test.grade_id), 0.0))
        test.score = 0.0 if test.clean_passed is False else test.kernel_score
        message = messages.get(test.notebook, {}).get(test.grade_id, "")
        test.message = timeout_reason(job, test.notebook, test.grade_id, message)
        if test.kernel_score > 0 and test.clean_passed is False:  # the kernel had something the clean re-run had not
            test.message = CLEAN_RERUN + (verdict.get("explained") or verdict["message"])
            result.flags.append(f"{test.notebook}: {test.grade_id} passed in the student's kernel but failed "
                                f"in the clean re-run ({verdict['message'][:200]})")

def settle_status(job: GradeJob, result: SubmissionResult, kernel: KernelRun, problems: list[str]) -> None:
    """The submission's status and the reason an instructor reads in the export."""
    rescued = "; tests scored by the clean re-run" if any(t.clean_passed is not None for t in result.tests) else ""
    if kernel.outcome.timed_out:
        result.status = Status.TIMED_OUT
        limit = job.limits.wall_seconds
        result.reason = f"the kernel run stopped after the {limit:.0f} s limit per submission{rescued}"
    elif kernel.scores is None:
        result.status = Status.CRASHED
        result.reason = f"nbgrader saved no grades ({last_error(kernel.outcome.output_tail)}){rescued}"
    elif result.flags:
        result.status = Status.FLAGGED
        result.reason = f"{len(result.flags)} finding(s) of the tamper check"
    if problems:
        result.reason = "; ".join(filter(None, [result.reason, *problems]))

def last_error(log: str) -> str:
    """The most telling line of an autograde log: the last exception that is not nbgrader's summary."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if ERROR_LINE.match(line) and "NbGraderException" not in line]
    if errors:
        return errors[-1][:300]
    return lines[-1][:300] if lines else "no output (killed)"
