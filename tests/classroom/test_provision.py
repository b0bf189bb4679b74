"""The hub's layout without root: the roster, the environment's pins, what each role's settings turn off."""

import json
import logging
import stat
from pathlib import Path

import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from autograder.course.settings import CourseSettings, course_config
from classroom.layout import COURSE_ID, HubLayout
from classroom.provision import (
    STUDENT_DISABLED_PLUGINS,
    STUDENT_SERVER_EXTENSIONS,
    hub_constraints,
    pinned_name,
    pins_of,
    write_config,
)
from classroom.roster import read_roster
from classroom.student_submit import PrivateSubmit
from classroom.system_users import check_name


def test_the_roster_gives_each_valid_id_once(tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text("student,name\nada,Ada L\nbob-2,Bob\n\nada,Ada again\n")
    assert read_roster(roster) == ["ada", "bob-2"]


@pytest.mark.parametrize("bad", ["Ada", "1ada", "ada lovelace", "ada@uni.edu", "a" * 33])
def test_an_id_that_cannot_be_a_system_user_is_refused_with_the_rule(tmp_path: Path, bad: str) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text(f"student\n{bad}\n")
    with pytest.raises(SystemExit, match="not usable as system user names"):
        read_roster(roster)
    with pytest.raises(ValueError, match="lower-case letters"):
        check_name(bad)


def test_the_hub_environment_takes_the_lock_s_pins_but_its_exceptions() -> None:
    constraints = hub_constraints().splitlines()
    exceptions = pins_of("classroom/constraints-hub.txt")
    assert exceptions, "classroom/constraints-hub.txt lists no exception"
    for exception in exceptions:
        assert exception in constraints
        assert sum(pinned_name(line) == pinned_name(exception) for line in constraints) == 1
    replaced = {pinned_name(line) for line in exceptions}
    lock = [line for line in pins_of("requirements-lock.txt") if pinned_name(line) not in replaced]
    assert set(lock) <= set(constraints)


def test_each_role_gets_its_tools(tmp_path: Path) -> None:
    layout = HubLayout(tmp_path)
    write_config(layout)
    common = (layout.role_config("common") / "nbgrader_config.py").read_text()
    assert repr(COURSE_ID) in common and repr(str(layout.exchange)) in common
    shared = PyFileConfigLoader("nbgrader_config.py", path=str(layout.role_config("common"))).load_config()
    assert shared.Execute.timeout == CourseSettings().cell_timeout, (
        f"a student's Validate should allow each cell what grading allows ({CourseSettings().cell_timeout} s), not "
        f"{shared.Execute.timeout}: nbgrader's own default (30 s) fails validations that grading passes"
    )
    student = layout.role_config("student")
    extensions = json.loads((student / "jupyter_server_config.json").read_text())["ServerApp"]["jpserver_extensions"]
    assert extensions == STUDENT_SERVER_EXTENSIONS and not extensions["nbgrader.server_extensions.formgrader"]
    disabled = json.loads((student / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    assert disabled == STUDENT_DISABLED_PLUGINS and disabled["@jupyter/nbgrader:formgrader"]
    instructor = (layout.role_config("instructor") / "nbgrader_config.py").read_text()
    assert "configure(get_config(), REPO_ROOT)" in instructor
    assert "groupshared = True" in instructor and "SafeExchangeCollect.owner_must_match = True" in instructor
    assert "ExchangeFactory.submit = 'classroom.student_submit.PrivateSubmit'" in common
    assert course_config(tmp_path).ExchangeFactory.collect.endswith("SafeExchangeCollect")
    instructor_pages = layout.role_config("instructor") / "labconfig" / "page_config.json"
    instructor_disabled = json.loads(instructor_pages.read_text())["disabledExtensions"]
    assert not any(plugin.startswith("@jupyter/nbgrader") for plugin in instructor_disabled)
    instructor_server = json.loads((layout.role_config("instructor") / "jupyter_server_config.json").read_text())
    assert instructor_server["ServerApp"]["jpserver_extensions"] == {"autograder.course.page_policy": True}


def test_a_student_s_hand_in_is_private_and_its_random_part_never_logged(tmp_path: Path, caplog) -> None:
    """As one user (the exchange attack test does it as real users): modes, group-shared marks, the log."""
    exchange, home = tmp_path / "exchange", tmp_path / "home"
    (exchange / COURSE_ID / "outbound" / "01_attention").mkdir(parents=True)
    (exchange / COURSE_ID / "inbound").mkdir()
    (home / "01_attention").mkdir(parents=True)
    (home / "01_attention" / "01_attention.ipynb").write_text("{}")
    config = Config()
    config.Exchange.root, config.Exchange.cache = str(exchange), str(tmp_path / "cache")
    config.CourseDirectory.course_id = COURSE_ID
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = "01_attention"
    submit = PrivateSubmit(coursedir=coursedir, authenticator=Authenticator(config=config), config=config)
    submit.assignment_dir = str(home)
    with caplog.at_level(logging.INFO):
        submit.start()
    (folder,) = (exchange / COURSE_ID / "inbound").iterdir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o750
    assert {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()} == {0o640}
    assert {p.name for p in folder.iterdir()} == {"01_attention.ipynb", "timestamp.txt", "submission_secret.txt"}
    random_part = folder.name.rsplit("+", 1)[1]
    assert "Destination" in caplog.text and random_part not in caplog.text
