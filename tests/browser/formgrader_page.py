"""What an instructor does in the formgrader of ``make instructor-lab``, and what it then shows.

The formgrader is opened as the README says, *Nbgrader → Formgrader* in JupyterLab's menu bar,
which shows it in an iframe inside JupyterLab. The instructor then goes *Manual Grading →
assignment → notebook*, shows the students' names, opens the student's submission, types a
score into a cell's score box and leaves the box: formgrader saves on ``change`` (a ``PUT`` to
``/formgrader/api/grade/<id>``), which is what :meth:`FormgraderPage.enter_score` waits for.

JupyterLab is opened first, not a formgrader URL with ``?token=``: formgrader's handlers strip
the ``/`` of ``base_url``, so jupyter_server then sets the login cookie without a path (the
page's folder) and the page's own API calls are redirected to the login page (its tables stay
at "Loading, please wait..."). JupyterLab's page sets it for ``/``, as in an instructor's browser.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from testbed.lab import JupyterLab

if TYPE_CHECKING:  # imported by the fixtures, which skip (or fail in CI) without playwright
    from playwright.sync_api import Frame, Locator, Page

# The submission page once formgrader has fetched the grades and bound a score box to each.
GRADES_BOUND = "() => !!window.formgrader && !!window.formgrader.grades && window.formgrader.grades.loaded === true"

# Once MathJax has typeset the page (a callback queued behind its typesetting): what it drew.
# ``formulas``: every formula MathJax found; ``drawn``: those with a rendering on the page;
# ``errors``: MathJax's error boxes; ``raw``: rendered Markdown text still holding $...$.
MATHS_DRAWN = r"""() => new Promise((resolve) => MathJax.Hub.Queue(() => {
    const texts = [...document.querySelectorAll(".text_cell_render")].map((cell) => cell.innerText);
    resolve({
        formulas: MathJax.Hub.getAllJax().length,
        drawn: document.querySelectorAll("[id^='MathJax-Element-'][id$='-Frame']").length,
        errors: document.querySelectorAll(".MathJax_Error, merror").length
            + (document.body.innerText.includes("Math Processing Error") ? 1 : 0),
        raw: texts.flatMap((text) => text.match(/\$[^$\s][^$\n]*\$/g) || []),
    });
}))"""
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@dataclass(frozen=True)
class Maths:
    """What MathJax made of the formulas of the submission's page."""

    formulas: int
    drawn: int
    errors: int
    raw: list[str]


def is_grade_save(response) -> bool:
    return response.request.method == "PUT" and "/formgrader/api/grade/" in response.url


class FormgraderPage:
    """Formgrader inside one JupyterLab tab of an instructor's server."""

    def __init__(self, page: "Page", lab: JupyterLab, artifacts: Path, timeout: float = 120.0):
        self.page = page
        self.lab = lab
        self.artifacts = artifacts
        self.timeout_ms = timeout * 1000
        self._frame: Frame | None = None
        self.errors: list[str] = []  # uncaught JavaScript errors, the formgrader's iframe included
        self.outside: list[str] = []  # requests to any other machine than the server's (a CDN, ...)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("request", self._note_outside_request)

    def _note_outside_request(self, request) -> None:
        address = urlsplit(request.url)
        if address.scheme in ("http", "https", "ws", "wss") and address.hostname not in LOCAL_HOSTS:
            self.outside.append(request.url)

    @property
    def frame(self) -> "Frame":
        if self._frame is None:
            raise RuntimeError("open_formgrader() first")
        return self._frame

    def open_lab(self) -> None:
        """JupyterLab, as ``make instructor-lab`` opens it, with the file browser hidden (more room)."""
        self.page.goto(self.lab.url("lab"), timeout=self.timeout_ms)
        self.page.wait_for_function("() => !!window.jupyterapp", timeout=self.timeout_ms)
        self.page.evaluate("() => window.jupyterapp.restored.then(() => window.jupyterapp.shell.collapseLeft())")

    def open_formgrader(self) -> None:
        """*Nbgrader → Formgrader* from JupyterLab's menu bar; waits for the formgrader's first page."""
        self.page.locator(".lm-MenuBar-item", has_text="Nbgrader").click(timeout=self.timeout_ms)
        self.page.locator(".lm-Menu-item", has_text=re.compile(r"^\s*Formgrader\s*$")).click()
        iframe = self.page.locator("#formgrader-iframe iframe")
        iframe.wait_for(timeout=self.timeout_ms)
        self._frame = iframe.element_handle().content_frame()
        self.frame.locator("#main-table").wait_for(timeout=self.timeout_ms)

    def open_submission(self, assignment: str, notebook: str, student: str) -> str:
        """*Manual Grading → assignment → notebook*, names shown, the student's submission; returns its id."""
        frame = self.frame
        frame.locator(".nav a", has_text="Manual Grading").click()
        frame.locator(f'#main-table a[href$="/formgrader/gradebook/{assignment}"]').click()
        frame.locator(f'#main-table a[href$="/formgrader/gradebook/{assignment}/{notebook}"]').click()
        frame.locator("#main-table a.name-hidden").first.wait_for(timeout=self.timeout_ms)  # the rows are loaded
        frame.locator("#toggle_names").click()
        frame.locator("#main-table a.name-shown", has_text=re.compile(rf"^\s*{re.escape(student)}\s*$")).click()
        frame.wait_for_function(GRADES_BOUND, timeout=self.timeout_ms)
        return frame.evaluate("() => submission_id")

    def maths(self) -> Maths:
        """Waits until MathJax (served by the instructor's server) has started and typeset the submission."""
        self.frame.wait_for_function("() => !!window.MathJax && MathJax.loaded === true", timeout=self.timeout_ms)
        return Maths(**self.frame.evaluate(MATHS_DRAWN))

    def reload(self) -> None:
        """Load the submission page again (what formgrader shows after a re-grade)."""
        self.frame.goto(self.frame.url, timeout=self.timeout_ms)
        self.frame.wait_for_function(GRADES_BOUND, timeout=self.timeout_ms)

    def score_box(self, grade_id: str) -> "Locator":
        return self.frame.locator(f"input.score#{grade_id}")

    def enter_score(self, grade_id: str, score: float) -> dict:
        """Type ``score`` into the cell's score box and leave it with Tab; returns the grade formgrader saved."""
        box = self.score_box(grade_id)
        box.scroll_into_view_if_needed()
        box.click()
        with self.page.expect_response(is_grade_save, timeout=self.timeout_ms) as saved:
            box.press_sequentially(f"{score:g}")
            box.press("Tab")
        response = saved.value
        if not response.ok:
            raise AssertionError(f"formgrader did not save {grade_id}: HTTP {response.status} {response.text()[:500]}")
        return response.json()

    def shown_score(self, grade_id: str) -> str:
        """The score box's value: the manual score formgrader loaded for that cell ("" when none)."""
        return self.score_box(grade_id).input_value()

    def screenshot(self, name: str, grade_id: str | None = None) -> Path:
        """The page, with the cell of ``grade_id`` (if given) scrolled into view.

        Formgrader scrolls (animated) to each box that gets the focus: that ends first.
        """
        self.frame.wait_for_function("() => !window.jQuery || !jQuery('body, html').is(':animated')")
        if grade_id:
            self.score_box(grade_id).evaluate("(node) => node.scrollIntoView({block: 'center'})")
        path = self.artifacts / name
        path.parent.mkdir(parents=True, exist_ok=True)  # again: another run may have emptied the folder
        self.page.screenshot(path=path)
        return path
