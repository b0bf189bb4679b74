"""A student's server keeps ``~/DUE_DATES.md`` up to date: each due date and their own, in their language.

A Jupyter server extension that the students' settings enable (``classroom/provision.py``). At the
server's start, then every ``TFCOURSE_DUE_DATES_REFRESH`` seconds (default 30), it reads the view the
hub published for this account (:mod:`classroom.student_view`) and rewrites the file where it changed,
read-only (0444: JupyterLab opens it without letting it be edited). A plain file in the home, rather
than a JupyterLab plugin: it needs nothing built or pinned in the browser, shows in the file browser
the student already uses, in either edition, and is there when the notebook is worked on offline.
"""

import os
import tempfile
from pathlib import Path

from tornado.ioloop import PeriodicCallback

from classroom.student_view import due_dates_markdown, read_view

FILE_NAME = "DUE_DATES.md"
REFRESH_VARIABLE = "TFCOURSE_DUE_DATES_REFRESH"


def refresh(home: Path) -> bool:
    """Write ``home/DUE_DATES.md`` from the published view if it changed; whether it was written."""
    view = read_view()
    if view is None:
        return False
    path, text = home / FILE_NAME, due_dates_markdown(view)
    try:
        if not path.is_symlink() and path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    handle, temporary = tempfile.mkstemp(dir=home, prefix=".DUE_DATES.", suffix=".md")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(temporary, 0o444)
    os.replace(temporary, path)  # replaces a link or a file in its place, never writes through it
    return True


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "classroom.due_dates_view"}]


def _load_jupyter_server_extension(serverapp) -> None:
    home = Path(serverapp.root_dir).expanduser()
    seconds = float(os.environ.get(REFRESH_VARIABLE, "30"))

    def update() -> None:
        try:
            if refresh(home):
                serverapp.log.info("%s: the due dates changed; rewritten", FILE_NAME)
        except OSError as error:  # a full disk, a home made read-only: the next look tries again
            serverapp.log.warning("%s not written: %s", FILE_NAME, error)

    update()
    PeriodicCallback(update, seconds * 1000).start()  # the loop's timer keeps it alive
