"""Helpers for the *Transformers from scratch* course notebooks.

One module per job: :mod:`tfcourse.device` (device choice and seeding),
:mod:`tfcourse.modes` (fast mode under nbgrader and CI), :mod:`tfcourse.plots`
(figures that return their ``Figure``), :mod:`tfcourse.style` (the figures' colours and line
styles, readable in greyscale, applied on import) and :mod:`tfcourse.checks` (visible-test
helpers whose messages say what was expected, what came out and why).
"""

from tfcourse.modes import fast_mode
from tfcourse.style import apply_course_style

apply_course_style()

# The course's release; pyproject.toml, CITATION.cff and CHANGELOG.md name the same one (tests/test_licence.py).
__version__ = "1.0.0"

__all__ = ["__version__", "fast_mode", "get_device", "seed_everything"]


def __getattr__(name: str):
    """``get_device`` and ``seed_everything`` import torch on first use (PEP 562), not with the package.

    The grader imports only ``tfcourse.language`` and ``tfcourse.messages``; loading torch with them
    slowed every grader command's start (docs/measurements.md, test suite).
    """
    if name in ("get_device", "seed_everything"):
        from tfcourse import device  # noqa: PLC0415

        return getattr(device, name)
    raise AttributeError(f"module 'tfcourse' has no attribute {name!r}")
