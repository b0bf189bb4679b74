# nbgrader settings of the course; the repository root's nbgrader_config.py loads this file.
from autograder.course.settings import REPO_ROOT, configure

configure(get_config(), REPO_ROOT)  # noqa: F821 (traitlets provides get_config)
