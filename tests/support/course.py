"""Throw-away courses: the ``throwaway_course`` fixture (tests/conftest.py) and its type.

``throwaway_course(*assignments, name="course", release=True, seeded=False)`` copies the named
assignments' source (and release) notebooks into a new temporary folder with
:meth:`autograder.course.course.Course.copy_to` and returns that folder's :class:`Course`; with
``seeded=True`` the course starts with the run's template gradebooks and reference times
(tests/support/grading_seed.py), as one graded before: for the slow tests that grade.
"""

from collections.abc import Callable

from autograder.course.course import Course

ThrowawayCourse = Callable[..., Course]
