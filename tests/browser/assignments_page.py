"""What a student and an instructor click on the hub: the login page, JupyterLab's Assignments tab, formgrader."""

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

MINUTES = 60_000  # Playwright's timeouts are in milliseconds


def log_in(page: "Page", hub_url: str, user: str, password: str, timeout_ms: int = 4 * MINUTES) -> None:
    """The hub's login form; waits until the user's JupyterLab has started and drawn itself."""
    page.goto(f"{hub_url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", password)
    page.click("#login_submit")
    page.wait_for_url(re.compile(rf"/user/{re.escape(user)}/lab"), timeout=timeout_ms)
    page.locator(".lm-MenuBar-item", has_text="Nbgrader").wait_for(timeout=timeout_ms)


class AssignmentsTab:
    """nbgrader's *Assignment List* in JupyterLab: released, downloaded and submitted assignments."""

    def __init__(self, page: "Page", artifacts: Path, timeout_ms: int = 2 * MINUTES):
        self.page, self.artifacts, self.timeout_ms = page, artifacts, timeout_ms

    def open(self) -> None:
        self.page.locator(".lm-MenuBar-item", has_text="Nbgrader").click(timeout=self.timeout_ms)
        self.page.locator(".lm-Menu-item", has_text=re.compile(r"^\s*Assignment List\s*$")).click()
        self.page.locator("#released_assignments_list").wait_for(timeout=self.timeout_ms)

    def refresh(self) -> None:
        self.page.locator("#refresh_assignments_list").click(timeout=self.timeout_ms)

    def row(self, section: str, assignment: str) -> "Locator":
        """The assignment's row in ``section``: ``released``, ``fetched`` or ``submitted``."""
        return self.page.locator(f"#{section}_assignments_list .list_item", has_text=assignment).first

    def press(self, section: str, assignment: str, button: str) -> None:
        row = self.row(section, assignment)
        row.wait_for(timeout=self.timeout_ms)
        row.get_by_role("button", name=button).click(timeout=self.timeout_ms)

    def fetch(self, assignment: str) -> None:
        self.press("released", assignment, "Fetch")
        self.row("fetched", assignment).wait_for(timeout=self.timeout_ms)

    def submit(self, assignment: str) -> None:
        from playwright.sync_api import expect  # the browser tests skip without playwright

        before = self.submitted(assignment).count()
        self.press("fetched", assignment, "Submit")
        expect(self.submitted(assignment)).to_have_count(before + 1, timeout=self.timeout_ms)

    def submitted(self, assignment: str) -> "Locator":
        """The times of ``assignment``'s submissions, listed under its row in *Submitted assignments*."""
        row = self.page.locator("#submitted_assignments_list .list_item", has_text=assignment)
        return row.get_by_text(re.compile(r"^\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+( UTC)?\s*$"))  # ngshare: no zone

    def fetch_feedback(self, assignment: str) -> None:
        self.press("submitted", assignment, "Fetch Feedback")
        self.page.locator("#submitted_assignments_list", has_text="view feedback").wait_for(timeout=self.timeout_ms)

    def screenshot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=path)
        return path


class Formgrader:
    """nbgrader's formgrader at ``/user/<instructor>/formgrader``: *Manage Assignments*."""

    def __init__(self, page: "Page", hub_url: str, instructor: str, timeout_ms: int = 2 * MINUTES):
        self.page, self.url, self.timeout_ms = page, f"{hub_url}/user/{instructor}/formgrader", timeout_ms

    def open(self) -> None:
        self.page.goto(self.url)
        self.page.locator("#main-table").wait_for(timeout=self.timeout_ms)

    def row(self, assignment: str) -> "Locator":
        return self.page.locator("#main-table tr", has=self.page.locator(".name", has_text=assignment))

    def click(self, assignment: str, column: str, message: str) -> None:
        """Press the link in ``column`` of the assignment's row and wait for formgrader's success dialog."""
        self.row(assignment).locator(f".{column} a").click(timeout=self.timeout_ms)
        dialog = self.page.locator(".modal-dialog", has_text=re.compile(f"{re.escape(message)}|There was an error"))
        dialog.wait_for(timeout=self.timeout_ms)
        text = dialog.inner_text()
        dialog.get_by_role("button", name=re.compile("OK|Close")).first.click()
        if message not in text:
            raise AssertionError(f"formgrader's {column} of {assignment} failed:\n{text}")

    def status(self, assignment: str) -> str:
        return self.row(assignment).locator(".status").inner_text().strip()
