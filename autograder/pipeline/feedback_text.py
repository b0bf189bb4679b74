"""The words of the feedback page's summary and of the clean re-run's explanations, in the student's edition.

A submission of a translated edition (whose notebook's metadata names it, see
:func:`autograder.course.notebooks.edition`) gets its summary in that edition's language; its own Markdown
cells are already translated, since nbgrader restores only locked and graded cells and the course's prose
cells are neither.
"""

from pathlib import Path

from tfcourse.language import EDITIONS
from tfcourse.messages import catalog
from tfcourse.registry import source

LOCALE = Path(__file__).with_name("locale")
ENGLISH_WORDS = {  # a translated edition's words: the grader's catalogs, autograder/pipeline/locale/<code>/
    "feedback": "Feedback",
    "title": "Feedback: {notebook}",
    "label": "{}:",  # a bold label before its value: "Status: graded"
    "separator": ": ",  # the heading's, between "Feedback" and the notebook
    "student": "Student",
    "status": "Status",
    "note": "Note",
    "score": "Autograded score",
    "by_hand": "written answers are graded by hand",
    "columns": ("test", "points", "result", "message"),
    "passed": "passed",
    "failed": "failed",
    "checks": "Checks that need a look by the instructor",
    "statuses": {"graded": "graded", "missing": "missing", "unreadable": "unreadable", "timed out": "timed out",
                 "crashed": "crashed", "flagged": "flagged"},
    "clean_rerun": "clean re-run: ",  # a failure message's prefix when the clean re-run failed the test
    # A test that passed in the student's kernel and failed in the clean re-run for a missing name.
    "clean_where": "line {line} of cell {cell}",
    "clean_missing_state": (
        "`{name}` was missing when your answers were run again on their own: {where} computes it from "
        "{lacking}, which no cell above defines (your kernel still had it from an earlier run), so that "
        "line was left out. Define what it needs in your answer cell."
    ),
    "clean_missing_code": (
        "`{name}` was missing when your answers were run again on their own: {where} sets it in top-level "
        "code (a call, a loop, an attribute), which that run leaves out. Set it with a plain assignment, or "
        "inside the function or class that uses it."
    ),
    "clean_missing_stopped": (
        "`{name}` was missing when your answers were run again on their own: cell {cell} stopped before "
        "defining it, with {error} (your kernel had what the cell needed from an earlier run)."
    ),
    "clean_missing_nowhere": (
        "`{name}` was missing when your answers were run again on their own: no cell above this test defines "
        "it (your kernel still had it from an earlier run: a cell since deleted or changed, or run out of "
        "order). Define it in your answer cell."
    ),
}

# How the message of a test the clean re-run failed starts (verdict.award); the page says it in the student's words.
CLEAN_RERUN = ENGLISH_WORDS["clean_rerun"]


def page_language(language: str) -> str:
    """The language the page is written in: ``language`` where it is an edition of the course, else English."""
    return language if language in EDITIONS else source()


def words(language: str) -> dict:
    """The summary's words in ``language``: the English ones, each translated where the catalogs say how."""
    found = catalog(page_language(language), LOCALE)

    def said(value: str | tuple | dict) -> str | tuple | dict:
        if isinstance(value, str):
            return found.get(value, value)
        return tuple(map(said, value)) if isinstance(value, tuple) else {key: said(v) for key, v in value.items()}

    return said(ENGLISH_WORDS)
