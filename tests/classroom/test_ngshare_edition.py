"""The Chinese edition through ngshare: released inside the assignment, fetched in place of the English notebook.

The classes the ngshare hub's settings name (``classroom/provision.py``), with ngshare-exchange's own encoding
both ways: what the release would upload is kept and served back to the fetch, the list and the submit's check
(ngshare's HTTP calls alone are replaced). The hub test (``tests/browser/test_classroom_hub_ngshare.py``) does
the same through a real ngshare, as real users.
"""

import getpass
import json
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeFactory
from traitlets.config import Config

from classroom.layout import COURSE_ID
from classroom.provision import EXCHANGE_SETTINGS

ASSIGNMENT = "01_attention"


def notebook(edition: str) -> bytes:
    metadata = {"tfcourse": {"edition": edition}} if edition != "en" else {}
    return json.dumps({"cells": [], "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}).encode()


@pytest.fixture
def ngshare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Config, Path, dict]:
    """The ngshare hub's settings, a course with the English release and the Chinese one, and the ngshare store."""
    monkeypatch.setenv("USER", getpass.getuser())  # ngshare_exchange reads it on import
    monkeypatch.setenv("TFCOURSE_NGSHARE_URL", "http://127.0.0.1:9/services/ngshare")  # nothing listens there
    config = Config()
    exec(EXCHANGE_SETTINGS["ngshare"].format(root=""), {"c": config})  # what provision writes for every user
    config.CourseDirectory.course_id = COURSE_ID
    config.Exchange.cache = str(tmp_path / "cache")
    course = tmp_path / "course"
    for folder, edition in (("release", "en"), ("notebooks_zh", "zh")):
        (course / folder / ASSIGNMENT).mkdir(parents=True)
        (course / folder / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_bytes(notebook(edition))
    (course / "release" / ASSIGNMENT / "words.txt").write_text("attention\n")
    store: dict = {}
    factory = ExchangeFactory(config=config)
    for exchange in (factory.release_assignment, factory.fetch_assignment, factory.list, factory.submit):
        monkeypatch.setattr(exchange, "ngshare_api_get", lambda self, url, params=None: served(store, url))
        monkeypatch.setattr(exchange, "ngshare_api_post", lambda self, url, data: store.update({url: data}) or {})
    return config, course, store


def served(store: dict, url: str) -> dict:
    """ngshare's answer: the course's assignments, or an assignment's files (with their content, as a fetch gets)."""
    if url == f"/assignments/{COURSE_ID}":
        return {"assignments": [path.rsplit("/", 1)[1] for path in store]}
    return {"files": json.loads(store[url]["files"])}


def run(config: Config, kind: str, course: Path | None = None, home: Path | None = None):
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT
    if course is not None:
        coursedir.root = str(course)
    exchange = getattr(ExchangeFactory(config=config), kind)
    step = exchange(coursedir=coursedir, authenticator=Authenticator(config=config), config=config)
    if home is not None:
        step.assignment_dir = str(home)
    return step


def test_a_chinese_student_fetches_the_chinese_notebook_an_english_one_the_english(
    ngshare: tuple[Config, Path, dict], tmp_path: Path
) -> None:
    config, course, store = ngshare
    run(config, "release_assignment", course).start()
    uploaded = [entry["path"] for entry in json.loads(store[f"/assignment/{COURSE_ID}/{ASSIGNMENT}"]["files"])]
    assert sorted(uploaded) == [".editions/zh/01_attention.ipynb", "01_attention.ipynb", "words.txt"], uploaded
    for edition in ("en", "zh"):
        config.EditionFetch.edition = edition  # the student's own setting, as on the filesystem hub
        home = tmp_path / f"home-{edition}"
        run(config, "fetch_assignment", home=home).start()
        folder = home / ASSIGNMENT
        assert sorted(path.name for path in folder.iterdir()) == ["01_attention.ipynb", "words.txt"], (
            f"a {edition} student's fetch wrote {sorted(path.name for path in folder.iterdir())}: the translated "
            "editions' folder must never reach a student's assignment (it would be handed in)"
        )
        assert (folder / f"{ASSIGNMENT}.ipynb").read_bytes() == notebook(edition), f"the {edition} student's notebook"
        assert (folder / "words.txt").read_text() == "attention\n"


def test_the_list_and_the_submit_see_one_notebook(ngshare: tuple[Config, Path, dict]) -> None:
    """The Assignments tab lists a released assignment's notebooks from ngshare, and the submit checks the hand-in
    against them: the Chinese notebook is neither one more notebook nor one the hand-in misses."""
    config, course, _ = ngshare
    run(config, "release_assignment", course).start()
    listed = run(config, "list")._get_notebooks(COURSE_ID, ASSIGNMENT)
    assert sorted(listed) == ["01_attention", "words"], listed
    checked = run(config, "submit")._get_assignment_notebooks(COURSE_ID, ASSIGNMENT)
    assert checked == ["01_attention.ipynb"], checked
