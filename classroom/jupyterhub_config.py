"""JupyterHub's settings for the course's classroom: ``make hub`` starts it with this file.

Every value comes from the layout that ``python -m classroom.provision`` made (its prefix in
``TFCOURSE_HUB_PREFIX``) and from a few variables:

- ``TFCOURSE_HUB_IP`` (default 127.0.0.1) and ``TFCOURSE_HUB_PORT`` (8000; the hub's own API
  listens on the next port and the proxy's API on the one after);
- ``TFCOURSE_HUB_AUTH``: ``pam`` (system passwords, the default), ``lti11`` or ``lti13`` (a
  link in the LMS; their settings are read from ``state/lti11.json`` or ``state/lti13.json``,
  see docs/running-a-class.md);
- ``TFCOURSE_HUB_STATE``: the folder of the hub's database, cookie secret and LTI settings
  (default ``state/`` under the prefix);
- ``TFCOURSE_HUB_EXTRA_CONFIG``: a further config file loaded last (the tests add an API token).

The exchange is the one ``provision`` laid out (``config/exchange``): nbgrader's folder on this
machine, or ngshare (``--exchange ngshare``), which the hub then runs as a managed service on
the port after the proxy's API, as its own system account, with the instructors as its admins.

Each server runs as its user's system account (LocalProcessSpawner). A student's opens on their
home, with nbgrader's assignment list and validate button only; an instructor's opens on the
course folder, with the formgrader, the create-assignment sidebar and the course list too.
"""

import grp
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the classroom package, beside this file

from classroom.hub_auth import is_instructor  # noqa: E402
from classroom.layout import DEFAULT_PREFIX, INSTRUCTORS, HubLayout  # noqa: E402
from classroom.provision import NGSHARE_USER  # noqa: E402

c = get_config()  # noqa: F821 (JupyterHub provides get_config)
layout = HubLayout(Path(os.environ.get("TFCOURSE_HUB_PREFIX", DEFAULT_PREFIX)))
port = int(os.environ.get("TFCOURSE_HUB_PORT", "8000"))
state = Path(os.environ.get("TFCOURSE_HUB_STATE", layout.state))

c.JupyterHub.bind_url = f"http://{os.environ.get('TFCOURSE_HUB_IP', '127.0.0.1')}:{port}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{port + 1}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{port + 2}"
c.ConfigurableHTTPProxy.command = [str(layout.proxy)]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")

auth = os.environ.get("TFCOURSE_HUB_AUTH", "pam")
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
    raise ValueError(f"TFCOURSE_HUB_AUTH={auth!r}: use pam, lti11 or lti13")

c.Spawner.cmd = [str(layout.env / "bin" / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120  # a 2-core machine starting several servers at once
c.Spawner.http_timeout = 120
c.Spawner.environment = {"PATH": f"{layout.env / 'bin'}:/usr/local/bin:/usr/bin:/bin"}



def role_settings(spawner) -> None:
    """Before a server starts: the course folder and the instructors' tools, or the home and a student's."""
    instructor = is_instructor(spawner.user.name)
    role = "instructor" if instructor else "student"
    config_path = [str(layout.role_config(role)), str(layout.role_config("common"))]
    environment = {**spawner.environment, "JUPYTER_CONFIG_PATH": os.pathsep.join(config_path)}
    if instructor:  # `python -m autograder` and the formgrader's settings import the course's own packages
        environment["PYTHONPATH"] = str(layout.course)
    spawner.environment = environment
    spawner.notebook_dir = str(layout.course) if instructor else "~"


c.Spawner.pre_spawn_hook = role_settings

extra = os.environ.get("TFCOURSE_HUB_EXTRA_CONFIG")
if extra:
    load_subconfig(extra)  # noqa: F821 (JupyterHub provides load_subconfig)

if layout.exchange_kind() == "ngshare":
    ngshare = f"http://127.0.0.1:{port + 3}"
    services = c.JupyterHub.services if isinstance(c.JupyterHub.services, list) else []  # the extra config's
    c.JupyterHub.services = [*services, {
        "name": "ngshare",
        "url": ngshare,
        "user": NGSHARE_USER,
        "cwd": str(layout.ngshare_state),
        "command": [
            str(layout.ngshare_env / "bin" / "python"), "-m", "ngshare",
            "--admins", ",".join(grp.getgrnam(INSTRUCTORS).gr_mem),  # they may create the course
            "--database", f"sqlite:///{layout.ngshare_state / 'ngshare.db'}",
            "--storage", f"{layout.ngshare_state / 'files'}/",
        ],
    }]  # fmt: skip
    # Each server's nbgrader reaches the service directly (its path keeps the hub's prefix).
    c.Spawner.environment["TFCOURSE_NGSHARE_URL"] = f"{ngshare}/services/ngshare"
