"""The course added to a department's existing JupyterHub, the way docs/existing-hub.md tells its administrator.

The department's hub is plain: JupyterHub from the lock in an environment of its own (made once and kept, as a
department's is; the course's traces in it, its ``.pth`` and kernel settings, are removed before each run), its own
short configuration (:data:`DEPARTMENT_CONFIG`: LocalProcessSpawner, each server as its real system user; nothing of
``classroom/jupyterhub_config.py``), configurable-http-proxy from the course's npm pins. The administrator then runs
the documented commands, timed: ``python -m classroom.install`` (students' and instructors' parts into that
environment, the course under its prefix), ``python -m classroom.roster`` (the student), and appends the lines the
install printed to the hub's configuration. Through the hub, each in a kernel of their own server: the instructor
releases 01, the student fetches it and submits the reference answers, the instructor collects, grades with
``python -m autograder grade``, writes feedback and releases it, and the student fetches a feedback page with full
marks. On the way: the student's server has no formgrader and cannot import the grader or read the course folder;
the instructor's formgrader carries the course's page policy. Root only (system users, a hub).
"""

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from pathlib import Path

import nbformat
import pytest

from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.settings import REPO_ROOT, release_notebook, source_notebook
from classroom.layout import HubLayout
from classroom.provision import BASE_PYTHON, digest, hub_constraints, install_proxy, pins_of, stamped
from classroom.system_users import remove_user
from testbed.hub import HUB_MODULE_TIMEOUT, Hub, KernelError, start_hub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(HUB_MODULE_TIMEOUT)]
DEPARTMENT = Path("/srv/tfcourse-test-department")  # the department's hub: env/, proxy/, state/, its config
COURSE_PREFIX = DEPARTMENT / "tfcourse"  # where the administrator lays the course out (--prefix)
TEACHER, ADA = "tfd-teacher", "tfd-ada"
ASSIGNMENT = "01_attention"
DEPARTMENT_PACKAGES = ("jupyterhub", "jupyterlab")  # the department's own hub: JupyterHub and JupyterLab, no more
ENV_PINS = ("requirements-lock.txt", "classroom/constraints-hub.txt")
DEPARTMENT_CONFIG = """\
# A department's JupyterHub: system users by PAM, each server its user's own process (LocalProcessSpawner).
import os
c = get_config()  # noqa: F821
port = int(os.environ["TFCOURSE_HUB_PORT"])
state = os.environ["TFCOURSE_HUB_STATE"]
c.JupyterHub.bind_url = f"http://127.0.0.1:{{port}}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{{port + 1}}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{{port + 2}}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.pid_file = f"{{state}}/proxy.pid"
c.JupyterHub.db_url = f"sqlite:///{{state}}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = f"{{state}}/jupyterhub_cookie_secret"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = c.Spawner.http_timeout = 120
c.Spawner.environment = {{"PATH": {path!r}}}
load_subconfig(os.environ["TFCOURSE_HUB_EXTRA_CONFIG"])  # noqa: F821 (the test's API token)
"""


@dataclass
class Department:
    hub: Hub
    layout: HubLayout  # the course's, under COURSE_PREFIX, in the department's environment
    seconds: dict[str, float] = field(default_factory=dict)  # the administrator's commands and the class's steps
    outputs: dict[str, str] = field(default_factory=dict)


def department_env(department: HubLayout) -> None:
    """The department's environment: JupyterHub and JupyterLab at the lock's pins (made once, kept between runs)."""
    stamp, value = department.env / ".department-pins", digest(ENV_PINS)
    if not stamped(stamp, value):
        shutil.rmtree(department.env, ignore_errors=True)
        subprocess.run([BASE_PYTHON, "-m", "venv", str(department.env)], check=True, timeout=300)
        constraints = department.env / "constraints.txt"
        constraints.write_text(hub_constraints())
        pins = [line for line in pins_of("requirements-lock.txt") if line.split("==")[0] in DEPARTMENT_PACKAGES]
        subprocess.run([str(department.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        *pins, "-c", str(constraints)], check=True, timeout=1200)
        stamp.write_text(value)
    site = subprocess.run([str(department.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    (Path(site) / "tfcourse-runtime.pth").unlink(missing_ok=True)  # what the course's last install left in it
    shutil.rmtree(department.env / "etc" / "ipython", ignore_errors=True)


def admin(department: Department, name: str, argv: list[str], timeout: float = 1500) -> str:
    """A command the administrator runs as root in the course's clone; its output, its time in ``seconds``."""
    started = time.monotonic()
    done = subprocess.run(argv, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
    department.seconds[name] = round(time.monotonic() - started, 1)
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{(done.stdout + done.stderr)[-4000:]}"
    return done.stdout


def page(hub: Hub, path: str) -> tuple[int, Message]:
    """A page of a user's server, fetched with the test's token: its status and headers (read case-blind)."""
    request = urllib.request.Request(f"{hub.url}/{path}", headers={"Authorization": f"token {hub.token}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


@pytest.fixture(scope="module")
def department(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Department]:
    if os.geteuid() != 0:
        pytest.skip("the existing-hub test creates system users and runs JupyterHub as root (CI runs as root)")
    hub_layout = HubLayout(DEPARTMENT)
    DEPARTMENT.mkdir(parents=True, exist_ok=True)
    DEPARTMENT.chmod(0o755)
    for folder in (COURSE_PREFIX, hub_layout.state):
        shutil.rmtree(folder, ignore_errors=True)
    department_env(hub_layout)
    install_proxy(hub_layout)
    layout = HubLayout(COURSE_PREFIX, users_env=hub_layout.env)
    env = str(hub_layout.env)
    config = DEPARTMENT / "jupyterhub_config.py"
    config.write_text(DEPARTMENT_CONFIG.format(proxy=str(hub_layout.proxy), path=f"{env}/bin:/usr/bin:/bin",
                                               singleuser=f"{env}/bin/jupyterhub-singleuser"))
    roster = tmp_path_factory.mktemp("roster") / "roster.csv"
    roster.write_text(f"student\n{ADA}\n")
    run = Department(hub=None, layout=layout)  # type: ignore[arg-type]
    try:
        printed = admin(run, "python -m classroom.install", [
            str(hub_layout.python), "-m", "classroom.install", "--students", env, "--instructor", env,
            "--instructor-user", TEACHER, "--prefix", str(COURSE_PREFIX),
        ])
        admin(run, "python -m classroom.roster", [str(hub_layout.python), "-m", "classroom.roster", str(roster),
                                                  "--prefix", str(COURSE_PREFIX)])
        lines = printed.split("add these lines at the end of the hub's jupyterhub_config.py, then restart the hub:")[1]
        with config.open("a") as handle:
            handle.write(lines)
        started = time.monotonic()
        run.hub = start_hub(hub_layout, DEPARTMENT / "hub.log", config=config)
        run.seconds["hub start"] = round(time.monotonic() - started, 1)
        play_the_class(run)
        yield run
    finally:
        if run.hub is not None:
            run.hub.stop()
        for user in (TEACHER, ADA):
            remove_user(user)
        print(f"\nexisting hub, seconds: {run.seconds}", file=sys.stderr)


def step(run: Department, name: str, user: str, command: list[str], cwd: str = "~") -> str:
    started = time.monotonic()
    run.outputs[name] = run.hub.shell(user, command, cwd, timeout=600)
    run.seconds[name] = round(time.monotonic() - started, 1)
    return run.outputs[name]


def play_the_class(run: Department) -> None:
    course = str(run.layout.course)
    step(run, "release", TEACHER, ["nbgrader", "release_assignment", ASSIGNMENT, "--force"], course)
    step(run, "fetch", ADA, ["nbgrader", "fetch_assignment", ASSIGNMENT])
    answers = reference_answers(nbformat.read(source_notebook(ASSIGNMENT), as_version=4))
    filled = nbformat.writes(fill_answers(nbformat.read(release_notebook(ASSIGNMENT), as_version=4), answers))
    run.hub.run_as(ADA, f"import pathlib\npathlib.Path.home().joinpath({ASSIGNMENT!r}, {ASSIGNMENT + '.ipynb'!r})"
                        f".write_text({filled!r})\n")
    step(run, "submit", ADA, ["nbgrader", "submit", ASSIGNMENT])
    step(run, "collect", TEACHER, ["nbgrader", "collect", ASSIGNMENT], course)
    step(run, "grade", TEACHER, ["python", "-m", "autograder", "grade", "--assignment", ASSIGNMENT], course)
    step(run, "feedback", TEACHER, ["python", "-m", "autograder", "feedback"], course)
    step(run, "release feedback", TEACHER, ["nbgrader", "release_feedback", ASSIGNMENT], course)
    step(run, "fetch feedback", ADA, ["nbgrader", "fetch_feedback", ASSIGNMENT])


def test_the_administrator_s_commands_add_the_course_and_say_what_to_add(department: Department):
    print(f"\nthe administrator's commands and the class's steps, seconds: {department.seconds}")
    config = (DEPARTMENT / "jupyterhub_config.py").read_text()
    assert "from classroom.existing_hub import configure" in config and "classroom/jupyterhub_config.py" not in config
    assert (department.layout.runtime / "tfcourse" / "__init__.py").exists()
    # The users' runtime holds the settings' declarations the hub reads (the course id), never the grader itself.
    grader = ("pipeline/commands", "pipeline/job", "isolated", "launch", "course/notebooks.py")
    assert not [part for part in grader if (department.layout.runtime / "autograder" / part).exists()]


def test_a_student_fetches_submits_and_gets_feedback_with_full_marks(department: Department):
    pages = sorted(Path(f"/home/{ADA}/{ASSIGNMENT}/feedback").glob(f"*/{ASSIGNMENT}.html"))
    assert len(pages) == 1, f"fetched feedback: {pages}\n{department.outputs['fetch feedback']}"
    text = re.sub(r"<[^>]+>", " ", pages[0].read_text())
    scores = re.findall(r"Autograded score:\s*([\d.]+)\s*/\s*([\d.]+)", text)
    assert scores and scores[0][0] == scores[0][1], f"the feedback's score: {scores[:3]}"
    assert (Path(f"/home/{ADA}") / "DUE_DATES.md").exists(), "the due-dates view wrote no ~/DUE_DATES.md"


def test_the_student_gets_the_student_side_only(department: Department):
    hub = department.hub
    assert hub.run_as(ADA, "import tfcourse; print(tfcourse.__version__)").strip()
    course_file = str(department.layout.course / "nbgrader_config.py")
    for code, error in (("import autograder.pipeline.commands.grade", "ModuleNotFoundError"),
                        (f"open({course_file!r})", "PermissionError")):
        with pytest.raises(KernelError, match=error):
            hub.run_as(ADA, code)
    assert page(hub, f"user/{ADA}/formgrader")[0] == 404
    status, headers = page(hub, f"user/{TEACHER}/formgrader")
    assert status == 200 and "script-src 'self'" in headers.get("Content-Security-Policy", ""), dict(headers)
