"""A throw-away JupyterLab server and a headless Chromium for the browser tests.

The server runs on 127.0.0.1 on a free port with a random token, from a temporary course
folder laid out like the repository (``nbgrader_config.py`` at its root, the notebooks in
``notebooks/``), with Jupyter's config, data and runtime folders in the same temporary
place: nothing the student flow writes (checkpoints, saved edits, nbgrader's validation)
lands in the repository. An instructor's server (:func:`start_instructor_lab`) runs on a
course folder itself, as ``make instructor-lab`` runs on the repository, for the formgrader.
Everything started here is ended by its process id.
"""

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from autograder.course.settings import INSTRUCTOR_SERVER_CONFIG, RELEASE_DIRECTORY

# Debian's chromium under Playwright, as NBGRADER_NOTES.md (section JupyterLab) records it.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

# The course's own nbgrader settings, for a course rooted at this temporary folder: what
# `make lab` gives the Validate button through the repository's nbgrader_config.py.
NBGRADER_CONFIG = """\
from pathlib import Path

from autograder.course.settings import configure

configure(get_config(), Path(__file__).resolve().parent)
"""

# JupyterLab settings for a predictable page: every cell in the DOM (no virtual scrolling),
# no news pop-up, no extension manager asking an index it cannot reach.
USER_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
PAGE_CONFIG = {
    "disabledExtensions": {
        "@jupyterlab/apputils-extension:announcements": True,
        "@jupyterlab/extensionmanager-extension": True,
    }
}


def chromium_executable() -> str | None:
    """Debian's chromium (``apt-get install chromium``), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port(following: int = 0) -> int:
    """A free port, with ``following`` free ports after it, below the kernel's ephemeral range.

    A port the system hands out for port 0 comes from the ephemeral range, the same range every
    kernel's ZeroMQ sockets draw from; with four workers starting kernels, one took a hub's ngshare
    port between our check and ngshare's bind (CI, stop 35). Ports below that range are handed out
    only on request, so only another test choosing at random at the same moment can collide.
    """
    lowest_ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    while True:
        port = secrets.choice(range(10_000, lowest_ephemeral - following))
        if all(_is_free(port + offset) for offset in range(following + 1)):
            return port


def _is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def end_processes(pids: list[int], grace: float = 10.0) -> None:
    """Terminate the processes with these ids, then kill those still alive after ``grace`` seconds."""
    alive = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
            process.terminate()
            alive.append(process)
        except psutil.NoSuchProcess:
            pass
    _, still_alive = psutil.wait_procs(alive, timeout=grace)
    for process in still_alive:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(still_alive, timeout=grace)


@dataclass
class JupyterLab:
    """A running JupyterLab server: a student's on a copy of ``notebooks/``, or an instructor's on a course."""

    folder: Path  # the temporary course folder: nbgrader_config.py, notebooks/, jupyter/
    root: Path  # the server's root_dir: folder/notebooks (start_lab) or the course folder (start_instructor_lab)
    port: int
    token: str
    process: subprocess.Popen
    log: Path
    child_pids: set[int] = field(default_factory=set)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        separator = "&" if "?" in path else "?"
        return f"{self.base_url}/{path.lstrip('/')}{separator}token={self.token}"

    def api(self, path: str, method: str = "GET") -> object:
        request = urllib.request.Request(
            f"{self.base_url}/api/{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, characters: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-characters:]

    def remember_children(self) -> None:
        """Note the ids of the server's descendants (kernels), to end them even if the server dies first."""
        try:
            self.child_pids.update(c.pid for c in psutil.Process(self.process.pid).children(recursive=True))
        except psutil.NoSuchProcess:
            pass

    def shut_down_kernels(self) -> None:
        """End every session (and its kernel) through the server's REST API."""
        self.remember_children()
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", method="DELETE")

    def stop(self) -> None:
        self.remember_children()
        try:
            self.shut_down_kernels()
        except (OSError, urllib.error.URLError, ValueError):
            pass  # the server is gone or broken: its children are ended by id below
        end_processes([self.process.pid])
        self.process.wait(timeout=30)  # reaped: it is ended already
        end_processes(sorted(self.child_pids))


def start_lab(folder: Path, notebooks: Path, timeout: float = 180.0) -> JupyterLab:
    """Copy ``notebooks`` into ``folder/notebooks`` and start JupyterLab on it; wait until it answers."""
    shutil.copytree(notebooks, folder / RELEASE_DIRECTORY, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    (folder / "nbgrader_config.py").write_text(NBGRADER_CONFIG)
    return launch_lab(folder, folder / RELEASE_DIRECTORY, timeout)


def start_instructor_lab(course: Path, timeout: float = 180.0) -> JupyterLab:
    """JupyterLab on a course folder, as ``make instructor-lab`` runs it at the repository root.

    The formgrader reads ``nbgrader_config.py`` from the server's working folder and wants the
    course inside the server's root: both are the course folder, which must hold that file. The
    server's settings add the course's page policy (autograder/course/page_policy.py).
    """
    return launch_lab(course, course, timeout, config_path=INSTRUCTOR_SERVER_CONFIG)


def launch_lab(folder: Path, root_dir: Path, timeout: float, config_path: Path | None = None) -> JupyterLab:
    """Start JupyterLab in ``folder`` (its settings in ``folder/jupyter``, and ``config_path``'s) on ``root_dir``."""
    jupyter = folder / "jupyter"
    for name, settings in USER_SETTINGS.items():
        path = jupyter / "config" / "lab" / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(settings))
    (jupyter / "config" / "labconfig").mkdir(parents=True, exist_ok=True)
    (jupyter / "config" / "labconfig" / "page_config.json").write_text(json.dumps(PAGE_CONFIG))

    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # the kernels must use the inline backend, as a student's do
    env.update(
        TFCOURSE_FAST="1",
        JUPYTER_CONFIG_DIR=str(jupyter / "config"),
        JUPYTER_DATA_DIR=str(jupyter / "data"),
        JUPYTER_RUNTIME_DIR=str(jupyter / "runtime"),
        IPYTHONDIR=str(jupyter / "ipython"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    if config_path is not None:
        env["JUPYTER_CONFIG_PATH"] = str(config_path)
    port, token = free_port(), secrets.token_hex(16)
    command = [
        str(Path(sys.executable).parent / "jupyter-lab"),
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root_dir}",
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = folder / "jupyterlab.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            command, cwd=folder, env=env, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    lab = JupyterLab(folder, root_dir, port, token, process, log)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {process.returncode}:\n{lab.log_tail()}")
        try:
            lab.api("status")
            return lab
        except (OSError, urllib.error.URLError):
            if time.monotonic() > deadline:
                lab.stop()
                raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f} s:\n{lab.log_tail()}") from None
            time.sleep(0.5)
