# The course's settings. nbgrader reads this file from the folder it is started in, and so does
# `python -m autograder` (with --root, that course's). Set the course's own settings above the last
# line (docs/instructors.md, Settings, lists them all), for example:
#   c.CourseSettings.cell_timeout = 180
#   c.GradeSettings.jobs = 4
from pathlib import Path

from autograder.course.settings import configure

# nbgrader's settings for the course rooted here (autograder/course/settings.py), from those above.
configure(get_config(), Path(__file__).resolve().parent)  # noqa: F821 (traitlets provides get_config)
