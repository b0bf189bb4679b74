"""The course's TLJH plugin (classroom/tljh_plugin.py) against The Littlest JupyterHub's hook specifications.

TLJH itself is not installable here, so its specifications are copied below, signatures and docstrings' first
lines, from ``tljh/hooks.py`` of https://github.com/jupyterhub/the-littlest-jupyterhub at commit
84ed38fd1f7c239c30378fecc23079911224066c (the newest snapshot read, 2026-04-01). The plugin is registered with a
pluggy PluginManager as TLJH's installer registers plugins (``tljh/installer.py``, ``setup_plugins``: the project
``tljh``, its entry point), and every hook it implements is called through ``pm.hook``; what each returns is
checked against what ``python -m classroom.install`` installs (the one the plain-hub test runs,
tests/classroom/test_existing_hub.py). What no test here runs: TLJH's installer and hub themselves, its systemd
spawner, and its account names (``jupyter-<name>``) on a real TLJH.
"""

import grp
import os
import pwd
import subprocess
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace

import pluggy
import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from autograder.pipeline.exchange.exchange_collect import SafeExchangeCollect
from autograder.pipeline.exchange.handins import RefusedHandin
from classroom import tljh_plugin
from classroom.existing_hub import role_config_path
from classroom.layout import DEFAULT_PREFIX, STUDENTS, HubLayout
from classroom.provision import pins_of
from classroom.student_pins import STUDENT_PACKAGES, requirements
from classroom.student_view import VIEW_VARIABLE
from classroom.system_users import remove_user

hookspec = pluggy.HookspecMarker("tljh")


class TljhHooks:
    """tljh/hooks.py's specifications, as TLJH declares them (bodies are docstrings there too)."""

    @hookspec
    def tljh_extra_user_conda_packages(self):
        """Return list of extra conda packages to install in user environment."""

    @hookspec
    def tljh_extra_user_conda_channels(self):
        """Return a list of conda channels to be used during user environment installation."""

    @hookspec
    def tljh_extra_user_pip_packages(self):
        """Return list of extra pip packages to install in user environment."""

    @hookspec
    def tljh_extra_hub_pip_packages(self):
        """Return list of extra pip packages to install in the hub environment."""

    @hookspec
    def tljh_extra_apt_packages(self):
        """Return list of extra apt packages to install in the user environment."""

    @hookspec
    def tljh_custom_jupyterhub_config(self, c):
        """Provide custom traitlet based config to JupyterHub."""

    @hookspec
    def tljh_config_post_install(self, config):
        """Modify on-disk tljh-config after installation."""

    @hookspec
    def tljh_post_install(self):
        """Post install script to be executed after installation and after all the other hooks."""

    @hookspec
    def tljh_new_user_create(self, username):
        """Script to be executed after a new user has been added."""


IMPLEMENTED = {"tljh_extra_apt_packages", "tljh_extra_user_pip_packages", "tljh_post_install",
               "tljh_new_user_create", "tljh_custom_jupyterhub_config"}


@pytest.fixture
def pm() -> pluggy.PluginManager:
    manager = pluggy.PluginManager("tljh")
    manager.add_hookspecs(TljhHooks)
    manager.register(tljh_plugin)
    manager.check_pending()  # every hook the plugin implements is one of TLJH's, with its arguments
    return manager


def test_tljh_finds_the_plugin_through_its_entry_point(pm: pluggy.PluginManager):
    (entry,) = [entry for entry in entry_points(group="tljh") if entry.name == "tfcourse"]
    assert entry.load() is tljh_plugin
    implemented = {name for name, hook in vars(pm.hook).items() if hook.get_hookimpls()}
    assert implemented == IMPLEMENTED


def test_the_user_environment_gets_the_pins_the_install_command_installs(pm: pluggy.PluginManager):
    (packages,) = pm.hook.tljh_extra_user_pip_packages()
    installed = [line for line in requirements().splitlines() if not line.startswith("#")]
    assert packages == installed and len(packages) == len(STUDENT_PACKAGES)
    assert set(packages) <= set(pins_of("requirements.txt")) and all("==" in pin for pin in packages)
    assert pm.hook.tljh_extra_apt_packages() == [["bubblewrap"]]  # the grader's sandbox (make sandbox installs it)


def test_the_hub_config_hook_adds_the_course_to_tljh_s_config(pm: pluggy.PluginManager, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TLJH_INSTALL_PREFIX", str(tmp_path))
    c = Config()
    earlier = []
    c.Spawner.pre_spawn_hook = earlier.append  # the department's own hook, which must still run
    c.JupyterHub.services = [{"name": "department"}]
    pm.hook.tljh_custom_jupyterhub_config(c=c)
    services = {service["name"]: service for service in c.JupyterHub.services}
    assert set(services) == {"department", "student-view"}
    assert services["student-view"]["command"][0] == str(tmp_path / "user" / "bin" / "python")
    assert c.Spawner.environment[VIEW_VARIABLE] == str(DEFAULT_PREFIX / "student-view")
    assert c.Spawner.pre_spawn_hook is not earlier.append
    spawner = SimpleNamespace(user=SimpleNamespace(name="ada"), environment={}, notebook_dir="~")
    c.Spawner.pre_spawn_hook(spawner)
    assert earlier == [spawner]
    assert spawner.environment["JUPYTER_CONFIG_PATH"] == role_config_path(HubLayout(DEFAULT_PREFIX), False)
    assert "PYTHONPATH" not in spawner.environment and spawner.notebook_dir == "~"


def test_the_post_install_hook_installs_into_tljh_s_user_environment(pm: pluggy.PluginManager, tmp_path: Path,
                                                                     monkeypatch):
    """Called where TLJH's user environment is missing: it names that environment and changes nothing first."""
    monkeypatch.setenv("TLJH_INSTALL_PREFIX", str(tmp_path))
    with pytest.raises(SystemExit, match=str(tmp_path / "user")):
        pm.hook.tljh_post_install()
    assert list(tmp_path.iterdir()) == []


def test_a_user_tljh_makes_joins_the_course_s_students_privately(pm: pluggy.PluginManager):
    if os.geteuid() != 0:
        pytest.skip("makes a system user: root only (CI runs as root)")
    name = "jupyter-tfdzoe"  # as TLJH names hub user tfdzoe's account
    subprocess.run(["useradd", "--create-home", name], check=True, timeout=60)  # TLJH's own user.ensure_user
    try:
        pm.hook.tljh_new_user_create(username=name)
        assert name in grp.getgrnam(STUDENTS).gr_mem
        assert Path(pwd.getpwnam(name).pw_dir).stat().st_mode & 0o777 == 0o700
    finally:
        remove_user(name)


def test_collect_checks_each_hand_in_against_the_account_the_template_names():
    """On TLJH a student id ``ada`` is account ``jupyter-ada``: the template the plugin's install writes."""
    config = Config()
    config.SafeExchangeCollect.owner_must_match = True
    config.SafeExchangeCollect.account_name = "r{student}"  # an account this machine has: root, for student "oot"
    collect = SafeExchangeCollect(coursedir=CourseDirectory(config=config), authenticator=Authenticator(config=config),
                                  config=config)
    assert collect.owner_of("oot") == 0
    with pytest.raises(RefusedHandin, match="no account"):
        collect.owner_of("root")  # account "rroot": none
    assert tljh_plugin.ACCOUNT_NAME.format(student="ada") == "jupyter-ada"
