"""JupyterHub's settings for the course's classroom: ``make hub`` starts it with this file.

Every value comes from the layout that ``python -m classroom.provision`` made and from ``HubSettings``
(autograder/course/settings.py, listed in docs/instructors.md): this checkout's ``nbgrader_config.py``, then the
variables ``make hub`` passes. The course folder's copy of that file is the instructors': the hub never reads it.

The exchange is the one ``provision`` laid out (``config/exchange``): nbgrader's folder on this machine, or ngshare,
which the hub then runs as a managed service. Each server runs as its user's system account (LocalProcessSpawner),
a student's on their home, an instructor's on the course folder (what each role gets: docs/running-a-class.md).
"""

import json
import shutil
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the classroom package, beside this file

from autograder.course.settings import CourseSettings, HubSettings, load_config
from classroom.existing_hub import add_service, add_student_view, role_environment
from classroom.layout import INSTRUCTORS, HubLayout, is_instructor, members
from classroom.limits import announce, configure_limits, confine_service
from classroom.provision import NGSHARE_USER

c = get_config()  # noqa: F821 (JupyterHub provides get_config)
hub = HubSettings(config=load_config())  # this checkout's nbgrader_config.py, then make hub's variables
layout = HubLayout(Path(hub.prefix))
# Each managed service ends with the hub's process, even a killed one; this and SIGINT's default below:
# docs/running-a-class.md (Serving it).
if shutil.which("setpriv") is None:
    raise SystemExit("the hub starts its services under setpriv (util-linux), which is not installed: install it "
                     "(Debian/Ubuntu: apt-get install util-linux), then start the hub again")
WITH_THE_HUB = ["setpriv", "--pdeathsig", "TERM", "--"]
# JupyterHub stops each service with SIGINT: a hub started with it ignored (`make hub &`) passed that on to them.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
port = hub.port
state = Path(hub.state or layout.state)

c.JupyterHub.bind_url = f"http://{hub.ip}:{port}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{port + 1}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{port + 2}"
c.ConfigurableHTTPProxy.command = [str(layout.proxy)]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
# A hub restarted mid-class leaves every student's server, kernels and the proxy running (JupyterHub's default stops
# them all: every student loses their variables); its next start finds them again (docs/running-a-class.md).
c.JupyterHub.cleanup_servers = False
c.JupyterHub.cleanup_proxy = False
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")

auth = hub.auth
if auth == "pam":
    c.JupyterHub.authenticator_class = "classroom.hub_auth.CoursePAMAuthenticator"
elif auth == "lti11":
    c.JupyterHub.authenticator_class = "classroom.hub_auth.CourseLTI11Authenticator"
    settings = json.loads((state / "lti11.json").read_text())
    c.LTI11Authenticator.consumers = settings["consumers"]
    c.LTI11Authenticator.username_key = settings.get("username_key", "custom_canvas_user_login_id")
elif auth == "lti13":
    c.JupyterHub.authenticator_class = "classroom.hub_auth.CourseLTI13Authenticator"
    settings = json.loads((state / "lti13.json").read_text())
    for name in ("issuer", "authorize_url", "jwks_endpoint", "username_key"):
        if name in settings:
            setattr(c.LTI13Authenticator, name, settings[name])
    c.LTI13Authenticator.client_id = set(settings["client_id"])
else:
    raise ValueError(f"HubSettings.auth={auth!r}: use pam, lti11 or lti13")

c.Spawner.cmd = [str(layout.env / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120  # a 2-core machine starting several servers at once
c.Spawner.http_timeout = 120
c.Spawner.environment = {"PATH": f"{layout.env / 'bin'}:/usr/local/bin:/usr/bin:/bin"}
# Each student's memory, CPU and processes (make hub's MEM_LIMIT, CPU_LIMIT, TASKS_LIMIT): a cgroup per student, or one
# line saying why not; their home's size (DISK_LIMIT).
announce(configure_limits(c, hub, home_images=layout.home_images))
# A kernel idle for KERNEL_CULL_IDLE seconds is shut down by its server, unless a notebook tab is still connected to
# it or it is running a cell (this culling and the idle servers' below: docs/running-a-class.md, Idle culling).
kernel_cull_idle = hub.kernel_cull_idle
if kernel_cull_idle > 0:
    c.Spawner.args = [
        f"--MappingKernelManager.cull_idle_timeout={kernel_cull_idle}",
        f"--MappingKernelManager.cull_interval={max(1, min(300, kernel_cull_idle // 2))}",
        "--MappingKernelManager.cull_connected=False",
        "--MappingKernelManager.cull_busy=False",
    ]


def role_settings(spawner) -> None:
    """Before a server starts: the course folder and the instructors' tools, or the home and a student's."""
    instructor = is_instructor(spawner.user.name)
    spawner.environment = role_environment(layout, instructor, spawner.environment)
    spawner.notebook_dir = str(layout.course) if instructor else "~"
    if instructor:  # grading runs the whole class's notebooks: no student limit
        spawner.mem_limit = spawner.cpu_limit = spawner.tasks_limit = spawner.disk_limit = None


c.Spawner.pre_spawn_hook = role_settings

if hub.extra_config:
    load_subconfig(hub.extra_config)  # noqa: F821 (JupyterHub provides load_subconfig)

# A server with no activity for CULL_IDLE seconds is stopped by jupyterhub-idle-culler, a hub service.
cull_idle = hub.cull_idle
if cull_idle > 0:
    roles = c.JupyterHub.load_roles if isinstance(c.JupyterHub.load_roles, list) else []  # the extra config's
    add_service(c, {
        "name": "idle-culler",
        "command": [*WITH_THE_HUB, str(layout.python), "-m", "jupyterhub_idle_culler", f"--timeout={cull_idle}",
                    f"--cull-every={max(1, min(300, cull_idle // 2))}"],
    })
    c.JupyterHub.load_roles = [*roles, {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }]

# Each student's due dates, extension and edition, published by a service run as root from this repository (as this
# file is), which alone reads the course folder and the roster's languages (classroom/publish_student_view.py).
add_student_view(c, layout, [*WITH_THE_HUB, str(layout.python)], state, hub.due_dates_every,
                 str(Path(__file__).resolve().parents[1]))

if layout.exchange_kind() == "ngshare":
    ngshare = f"http://127.0.0.1:{port + 3}"
    # Its memory in a cgroup of its own (make hub's NGSHARE_MEM_LIMIT), which its launcher joins.
    confined, line = confine_service(NGSHARE_USER, hub)
    announce(line)
    add_service(c, {
        "name": "ngshare",
        "url": ngshare,
        "user": NGSHARE_USER,
        "cwd": str(layout.ngshare_state),
        "environment": confined,
        # ngshare itself listens on every interface: its launcher binds it to this url's host, the loopback.
        "command": [
            *WITH_THE_HUB, str(layout.ngshare_env / "bin" / "python"),
            str(layout.runtime / "classroom" / "ngshare_service.py"),
            "--admins", ",".join(members(INSTRUCTORS)),  # they may create the course
            "--database", f"sqlite:///{layout.ngshare_state / 'ngshare.db'}",
            "--storage", f"{layout.ngshare_state / 'files'}/",
        ],
    })
    # Each server's nbgrader reaches the service directly (its path keeps the hub's prefix).
    c.Spawner.environment[CourseSettings.variable("ngshare_url")] = f"{ngshare}/services/ngshare"
