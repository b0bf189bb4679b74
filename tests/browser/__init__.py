"""The student flow and the formgrader in a real browser: JupyterLab driven by headless Chromium through Playwright.

- :mod:`testbed.lab`: a throw-away JupyterLab server and a headless Chromium, both ended by their ids;
- :mod:`tests.browser.notebook_page`: what a student does in a notebook tab (run all, Validate) and what it shows;
- :mod:`tests.browser.test_student_flow`: per release notebook, untouched and filled with the reference answers;
- :mod:`tests.browser.formgrader_page`: what an instructor does in the formgrader (manual grading, overrides);
- :mod:`tests.browser.test_formgrader`: manual scores given in formgrader survive a re-grade and reach the export.
"""
