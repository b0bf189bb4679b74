"""What the per-notebook tests share.

- :mod:`testbed.notebooks`: read nbgrader notebooks (answers, tests, TODOs, hints, solution code);
- :mod:`tests.support.inprocess`: run a notebook's cells in this process, the way nbgrader grades them;
- :mod:`tests.support.harness`: mutants and alternatives graded on that in-process runner;
- :mod:`tests.support.course`: throw-away course folders (the ``throwaway_course`` fixture);
- :mod:`testbed.nbgrader_course`: a throw-away nbgrader course graded by nbgrader itself.
"""
