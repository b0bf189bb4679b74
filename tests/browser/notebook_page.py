"""What a student does in a JupyterLab notebook tab, and what the page then shows.

Actions go through the page the way a student's do: the first notebook is opened by its URL, the
next ones in the same JupyterLab as its file browser opens them (the other tabs closed: each page load
of JupyterLab costs Chromium seconds of CPU, docs/measurements.md), *Run All Cells* is JupyterLab's own command (the
one behind the Run menu), and Validate is a click on nbgrader's toolbar button. What the test reads
comes from the rendered page (output text, ``<img>`` elements that loaded, the dialog's text), with
the output types (``error`` or not) read from the notebook model that JupyterLab renders.
"""

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from testbed.lab import JupyterLab

if TYPE_CHECKING:  # imported by the fixtures, which skip (or fail in CI) without playwright
    from playwright.sync_api import Locator, Page

# The notebook in the main area, once JupyterLab exposes itself as window.jupyterapp.
CURRENT = "window.jupyterapp && window.jupyterapp.shell.currentWidget"

KERNEL_IDLE = f"""() => {{
    const panel = {CURRENT};
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
        && panel.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
}}"""

# The file browser's way to open a notebook (docmanager:open), every other tab closed unsaved first:
# one notebook in the main area, with a kernel of its own.
OPEN_IN_PLACE = """async (path) => {
    const app = window.jupyterapp;
    for (const widget of Array.from(app.shell.widgets('main'))) {
        if (widget.context) { widget.context.model.dirty = false; }
        widget.dispose();
    }
    await app.commands.execute('docmanager:open', {path: path, factory: 'Notebook'});
}"""

RUN_ALL = """() => {
    window.__runAll = null;
    window.jupyterapp.commands.execute('notebook:run-all-cells').then(
        (ok) => { window.__runAll = {done: true, ok: ok}; },
        (error) => { window.__runAll = {done: true, ok: false, error: String(error)}; });
}"""

CELLS = f"""() => {CURRENT}.content.widgets.map((cell, index) => {{
    const code = cell.model.type === 'code';
    cell.node.dataset.testIndex = String(index);  // for locators: [data-test-index="N"]
    const images = Array.from(cell.node.querySelectorAll('.jp-OutputArea-output img'));
    return {{
        index: index,
        type: cell.model.type,
        execution_count: code ? cell.model.executionCount : null,
        output_types: code ? cell.model.outputs.toJSON().map((o) => o.output_type) : [],
        output_text: code ? cell.outputArea.node.innerText : '',
        images: images.length,
        rendered_images: images.filter((img) => img.complete && img.naturalWidth > 0).length,
    }};
}})"""


@dataclass
class RenderedCell:
    """One cell as the page shows it after a run."""

    index: int
    type: str
    execution_count: int | None
    output_types: list[str]
    output_text: str
    images: int
    rendered_images: int

    @property
    def failed(self) -> bool:
        return "error" in self.output_types


@dataclass
class Validation:
    """The text of nbgrader's *Validation Results* dialog and the screenshot of it."""

    text: str
    passed: bool
    screenshot: Path
    seconds: float


class NotebookPage:
    """One notebook open in its own JupyterLab workspace (nothing else open, a fresh kernel)."""

    def __init__(self, page: "Page", lab: JupyterLab, path: str, artifacts: Path):
        self.page = page
        self.lab = lab
        self.path = path
        self.artifacts = artifacts

    def open(self, timeout: float = 180.0) -> None:
        if self.page.evaluate("() => !!window.jupyterapp"):  # JupyterLab is loaded: open it there
            self.page.evaluate(OPEN_IN_PLACE, self.path)
        else:
            workspace = Path(self.path).stem.replace(".", "-")
            self.page.goto(self.lab.url(f"lab/workspaces/{workspace}/tree/{self.path}"), timeout=timeout * 1000)
        self.page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=timeout * 1000)
        self.page.wait_for_function(KERNEL_IDLE, timeout=timeout * 1000)
        # More room for the notebook: hide the file browser.
        self.page.evaluate("() => window.jupyterapp.shell.collapseLeft()")

    def run_all(self, timeout: float) -> tuple[bool, float]:
        """Run All Cells; wait until JupyterLab is done (it stops at the first error). Returns (ok, seconds)."""
        start = time.perf_counter()
        self.page.evaluate(RUN_ALL)
        self.page.wait_for_function("() => window.__runAll && window.__runAll.done", timeout=timeout * 1000)
        self.page.wait_for_function(KERNEL_IDLE, timeout=timeout * 1000)
        result = self.page.evaluate("() => window.__runAll")
        return bool(result.get("ok")), time.perf_counter() - start

    def cells(self) -> list[RenderedCell]:
        return [RenderedCell(**cell) for cell in self.page.evaluate(CELLS)]

    def cell(self, index: int) -> "Locator":
        """Cell ``index`` (as numbered by :meth:`cells`, which must have run)."""
        return self.page.locator(f'.jp-NotebookPanel:visible .jp-Cell[data-test-index="{index}"]')

    def screenshot_cell(self, index: int, name: str, block: str = "center") -> Path:
        """The page with cell ``index`` scrolled to the ``block`` ("start", "center") of the notebook."""
        self.cell(index).evaluate("(node, block) => node.scrollIntoView({block: block})", block)
        self.page.wait_for_timeout(300)
        return self.screenshot(name)

    def screenshot(self, name: str) -> Path:
        path = self.artifacts / name
        path.parent.mkdir(parents=True, exist_ok=True)  # again: another run may have emptied the folder
        self.page.screenshot(path=path)
        return path

    def validate(self, name: str, timeout: float) -> Validation:
        """Click Validate, wait for nbgrader's dialog, keep a screenshot of it, close it."""
        start = time.perf_counter()
        self.page.locator(".jp-NotebookPanel:visible .validate-button").click()
        dialog = self.page.locator(".jp-Dialog").filter(has_text="Validation Results")
        dialog.wait_for(timeout=timeout * 1000)
        seconds = time.perf_counter() - start
        text = dialog.locator(".jp-Dialog-content").inner_text()
        passed = dialog.locator(".validation-success").count() > 0
        path = self.screenshot(name)
        dialog.locator("button.jp-mod-accept").click()
        dialog.wait_for(state="detached")
        return Validation(text, passed, path, seconds)
