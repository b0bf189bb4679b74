# nbgrader settings of the course; the repository root's nbgrader_config.py loads this file.
from pathlib import Path

from autograder.course.settings import configure

configure(get_config(), Path(__file__).resolve().parents[2])  # noqa: F821 (traitlets provides get_config)
