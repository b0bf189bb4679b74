"""The fast-mode switch: small data and short runs under the grader and in CI.

nbgrader sets ``NBGRADER_EXECUTION`` (``autograde`` or ``validate``) while it runs
a notebook; CI and the test suite set ``TFCOURSE_FAST=1``. A student's own run
sees neither and gets the full run.
"""

import os

FAST_ENV_VAR = "TFCOURSE_FAST"


def under_grader() -> bool:
    """True while nbgrader validates or autogrades the notebook (``NBGRADER_EXECUTION`` is set)."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))


def fast_mode() -> bool:
    """True under nbgrader validation/autograding or when ``TFCOURSE_FAST`` is truthy."""
    if under_grader():
        return True
    return os.environ.get(FAST_ENV_VAR, "").strip().lower() in {"1", "true", "yes", "on"}
