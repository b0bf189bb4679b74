# nbgrader settings of the course; the repository root's nbgrader_config.py loads this file.
from pathlib import Path

from autograder.course import configure

configure(get_config(), Path(__file__).resolve().parent.parent)  # noqa: F821 (traitlets provides get_config)
