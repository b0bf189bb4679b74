"""Fixtures of the browser tests: one JupyterLab server and one headless Chromium per session.

Outside CI the tests skip when Debian's chromium or the playwright package is missing
(`make browser-test` installs chromium when run as root); in CI (``CI`` set) they fail
instead, so a missing browser cannot pass for a green run.
"""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from autograder.course.settings import RELEASE_DIRECTORY, REPO_ROOT
from testbed.lab import CHROMIUM_FLAGS, JupyterLab, chromium_executable, start_lab
from tests.support.harness import BROWSER_ARTIFACTS

ARTIFACTS = BROWSER_ARTIFACTS
WRITTEN: list[Path] = []  # ARTIFACTS, once this session has written there
FAILED = pytest.StashKey[bool]()


def missing(what: str) -> None:
    message = f"{what} is missing: run `make browser-test` (installs Debian's chromium when root)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; in CI the browser test must run, not skip", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def chromium() -> str:
    path = chromium_executable()
    if path is None:
        missing("chromium (Debian package `chromium`)")
    return path


@pytest.fixture(scope="session")
def playwright_driver(chromium: str):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the playwright Python package (requirements.txt)")
    manager = sync_playwright().start()
    try:
        yield manager
    finally:
        manager.stop()


@pytest.fixture(scope="session")
def browser(playwright_driver, chromium: str):
    browser = playwright_driver.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def lab(chromium: str, artifacts: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    server = start_lab(tmp_path_factory.mktemp("jupyterlab"), REPO_ROOT / RELEASE_DIRECTORY)
    try:
        yield server
    finally:
        server.stop()
        artifacts.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")  # the halves of the student flow run on two workers
        shutil.copyfile(server.log, artifacts / f"jupyterlab-{worker}.log")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when == "call":
        item.stash[FAILED] = report.failed
    return report


@contextmanager
def fresh_page(browser, artifacts: Path, request: pytest.FixtureRequest):
    """A page in a fresh browser context; if the test failed, a screenshot of what it showed last."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        yield page
    finally:
        if request.node.stash.get(FAILED, False):
            artifacts.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=artifacts / f"failed-{request.node.name}.png")
        context.close()


@pytest.fixture(scope="session")
def student_page(browser, lab: JupyterLab):
    """The student's JupyterLab, loaded once per worker: each test opens its notebook there."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def page(student_page, lab: JupyterLab, artifacts: Path, request: pytest.FixtureRequest):
    """The student's page; if the test failed, a screenshot of what it showed last; its kernels shut down after."""
    try:
        yield student_page
    finally:
        if request.node.stash.get(FAILED, False):
            artifacts.mkdir(parents=True, exist_ok=True)
            student_page.screenshot(path=artifacts / f"failed-{request.node.name}.png")
        lab.shut_down_kernels()


@pytest.fixture
def bare_page(browser, artifacts: Path, request: pytest.FixtureRequest):
    """A fresh page for a test that starts its own server (the formgrader's)."""
    with fresh_page(browser, artifacts, request) as page:
        yield page


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Screenshots and the server's log, kept after the run (``build/`` is git-ignored).

    Emptied once per run, before any worker starts (tests/conftest.py): the student flow and the
    formgrader run on different workers, and emptying it here raced between them.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    WRITTEN.append(ARTIFACTS)
    return ARTIFACTS


def pytest_terminal_summary(terminalreporter) -> None:
    if WRITTEN:
        terminalreporter.section("browser test")
        terminalreporter.write_line(f"screenshots and the JupyterLab log: {ARTIFACTS}")
