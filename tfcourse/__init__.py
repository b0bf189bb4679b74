"""Helpers for the *Transformers from scratch* course notebooks.

One module per job: :mod:`tfcourse.device` (device choice and seeding),
:mod:`tfcourse.modes` (fast mode under nbgrader and CI), :mod:`tfcourse.plots`
(figures that return their ``Figure``), :mod:`tfcourse.style` (the figures' colours and line
styles, readable in greyscale, applied on import) and :mod:`tfcourse.checks` (visible-test
helpers whose messages say what was expected, what came out and why).
"""

import sys
from importlib.util import find_spec

from tfcourse.modes import fast_mode

# The figures' style, for every notebook that imports the package. A hub's own environment may hold no matplotlib:
# its processes read the registry of editions (tfcourse.registry) and the catalogs alone.
if find_spec("matplotlib") is not None:
    from tfcourse.style import apply_course_style

    apply_course_style()


def _watch_cells() -> None:
    """In a notebook's kernel, let :mod:`tfcourse.check` see each cell run (the check reuses their outcomes)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and hasattr(shell, "events"):
        from tfcourse.check import watch  # only in a kernel

        watch(shell)


_watch_cells()

# The course's release; pyproject.toml, CITATION.cff and CHANGELOG.md name the same one (tests/test_licence.py).
__version__ = "1.2.1"

__all__ = ["__version__", "check_notebook", "fast_mode", "get_device", "seed_everything", "todo_left"]


def todo_left() -> str:
    """Which TODO is still open: the message of an untouched answer's ``raise NotImplementedError(todo_left())``.

    The release puts that line where each answer goes, so the error a test cell shows names the function (or
    method) the student has yet to write, in the reader's language.
    """
    from tfcourse.messages import tr  # Babel is not needed before a message is

    code = sys._getframe(1).f_code
    if code.co_name == "<module>":
        return tr("this TODO is not written yet: replace the `raise NotImplementedError(...)` line of its answer "
                  "cell with your code, then run that cell again.")
    return tr("TODO {name} is not written yet: replace the `raise NotImplementedError(...)` line in it with your "
              "code, then run its answer cell and this cell again.", name=code.co_qualname)


def __getattr__(name: str):
    """``get_device`` and ``seed_everything`` import torch on first use (PEP 562), not with the package.

    The grader imports only ``tfcourse.language`` and ``tfcourse.messages``; loading torch with them
    slowed every grader command's start (docs/measurements.md, test suite).
    """
    if name in ("get_device", "seed_everything"):
        from tfcourse import device

        return getattr(device, name)
    if name == "check_notebook":  # the last cell of every notebook (tfcourse.check)
        from tfcourse.check import check_notebook

        return check_notebook
    raise AttributeError(f"module 'tfcourse' has no attribute {name!r}")
