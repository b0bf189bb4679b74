"""The hub's layout without root: the roster, the environment's pins, what each role's settings turn off."""

import json
from pathlib import Path

import pytest

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
    student = layout.role_config("student")
    extensions = json.loads((student / "jupyter_server_config.json").read_text())["ServerApp"]["jpserver_extensions"]
    assert extensions == STUDENT_SERVER_EXTENSIONS and not extensions["nbgrader.server_extensions.formgrader"]
    disabled = json.loads((student / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    assert disabled == STUDENT_DISABLED_PLUGINS and disabled["@jupyter/nbgrader:formgrader"]
    instructor = layout.role_config("instructor")
    assert "configure(get_config(), REPO_ROOT)" in (instructor / "nbgrader_config.py").read_text()
    instructor_disabled = json.loads((instructor / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    assert not any(plugin.startswith("@jupyter/nbgrader") for plugin in instructor_disabled)
