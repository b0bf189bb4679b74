"""A student's ``nbgrader submit`` in a process forked from the test and switched to the student (root only).

As the Assignments tab's Submit does inside the student's running server: no interpreter to start, so
that a burst of a hundred submits spends the two cores on the hand-ins, not on a hundred imports. What
the child does is what ``nbgrader submit <assignment>`` in the student's terminal does, with the
environment given (the hub's settings for the student, which name the exchange's submit class).
"""

import json
import os
import pwd
import time
import traceback
from collections.abc import Callable
from pathlib import Path


def submit_in_child(student: str, assignment: str, environment: dict[str, str], start_at: float, report: Path,
                    in_child: Callable[[], None] | None = None) -> int:
    """Fork; the child becomes ``student`` with ``environment`` in their home, runs ``in_child`` (if given), hands
    ``assignment`` in at ``start_at`` (``time.monotonic``) and writes to ``report`` when it began and how many
    seconds the submit took, or the error. The child's pid.

    Whatever the submit imports must be imported before the call: the student cannot read the standard library of
    an interpreter under root's home."""
    from nbgrader.apps.submitapp import SubmitApp

    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        account = pwd.getpwnam(student)
        os.setgroups(os.getgrouplist(student, account.pw_gid))
        os.setgid(account.pw_gid)
        os.setuid(account.pw_uid)
        os.environ.clear()
        os.environ.update(environment)
        os.chdir(account.pw_dir)
        if in_child is not None:
            in_child()
        time.sleep(max(0.0, start_at - time.monotonic()))
        began = time.monotonic()
        app = SubmitApp()
        app.log_level = "WARN"
        app.initialize([assignment])
        app.start()
        report.write_text(json.dumps({"began": began, "seconds": time.monotonic() - began}))
        code = 0
    except BaseException:  # the child reports every failure and never returns into pytest
        report.write_text(json.dumps({"error": traceback.format_exc()[-2000:]}))
    finally:
        os._exit(code)
