"""A real JupyterHub for the classroom test: the course's own configuration, throwaway system users.

:func:`start_hub` runs ``classroom/jupyterhub_config.py`` from a layout that
``classroom.provision`` made under :data:`TEST_PREFIX` (its environment is kept between runs;
the course folder, the exchange and the hub's state are made anew), on free loopback ports. An
extra config file adds one API token, a service's, allowed to manage users and to reach their
servers; the test runs code *as a user* through that user's own server (a kernel it starts
there), which is how a student's terminal or notebook would run it.
"""

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import websocket

from classroom.layout import HubLayout
from testbed.lab import end_processes, free_port

TEST_PREFIX = Path("/srv/tfcourse-test")
# pytest-timeout's limit (s) for the tests of a module that lays out TEST_PREFIX: the first one builds the hub's
# environment when it is missing or its pins changed (most of a 409 s set-up on this 2-core machine under other
# helpers' load, 2026-11-29) before its class runs (281 s, the same day): past the suite's 600 s.
HUB_MODULE_TIMEOUT = 1200
CONFIG = Path(__file__).resolve().parents[1] / "classroom" / "jupyterhub_config.py"
SERVICE = "classroom-test"
EXTRA_CONFIG = """\
c.JupyterHub.services = [{{"name": "{service}", "api_token": "{token}"}}]
c.JupyterHub.load_roles = [{{
    "name": "{service}",
    "scopes": ["admin:users", "admin:servers", "access:servers", "read:users", "tokens"],
    "services": ["{service}"],
}}]
"""


class KernelError(RuntimeError):
    """Code run in a user's kernel raised: the traceback, as the kernel sent it."""


class KernelNeverAnswered(RuntimeError):
    """The server closed the kernel's channel before the kernel said a word: the code never ran."""


@dataclass
class Hub:
    layout: HubLayout
    port: int
    token: str
    process: subprocess.Popen | None  # None until :meth:`relaunch` starts it
    log: Path
    state: Path
    auth: str = "pam"
    interrupt_ignored: bool = False  # started as a script's background job (`make hub &`) is: SIGINT ignored
    config: Path = CONFIG  # the hub's configuration file: the course's, or a department's own (test_existing_hub)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(self, path: str, method: str = "GET", body: object = None, timeout: float = 60) -> object:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}/{path.lstrip('/')}", data=data, method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
        return json.loads(text) if text else None

    def user(self, name: str) -> dict:
        """The hub's record of ``name`` (made, as a first login would, if the hub has none yet)."""
        try:
            return self.request(f"hub/api/users/{name}")
        except urllib.error.HTTPError as error:
            if error.code != 404:
                raise
        return self.request(f"hub/api/users/{name}", method="POST")

    def start_server(self, name: str, timeout: float = 180) -> None:
        """Start ``name``'s server through the hub's API (as a login would) and wait until it answers."""
        if not self.user(name).get("server"):
            try:
                self.request(f"hub/api/users/{name}/server", method="POST")
            except urllib.error.HTTPError as error:
                if error.code != 400:  # 400: already starting
                    raise
        deadline = time.monotonic() + timeout
        while not self.user(name).get("server"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name}'s server did not start in {timeout} s:\n{self.log_tail()}")
            time.sleep(1)

    def run_as(self, name: str, code: str, timeout: float = 300) -> str:
        """Run ``code`` in a new kernel of ``name``'s own server; its standard output (raises on an error)."""
        self.start_server(name)
        try:
            return self.run_in_new_kernel(name, code, timeout)
        except KernelNeverAnswered:
            # jupyter_client picks a kernel's ports before the kernel binds them; on a busy machine
            # another process can take one in between, the kernel dies at start ("Address already in
            # use") and the server gives up on the channel after 60 s (a full run, 2026-11-27). The
            # code never ran: once more, in a fresh kernel.
            print(f"{name}'s kernel never answered; running the code in a fresh kernel", file=sys.stderr)
            return self.run_in_new_kernel(name, code, timeout)

    def shell(self, name: str, command: list[str], cwd: str = "~", timeout: float = 900) -> str:
        """A command in a kernel of ``name``'s server (their environment, their permissions); its output (raises
        :class:`KernelError` where it exits non-zero)."""
        code = (
            "import os, subprocess, sys\n"
            f"done = subprocess.run({command!r}, cwd=os.path.expanduser({cwd!r}), capture_output=True, text=True)\n"
            "print(done.stdout + done.stderr)\n"
            "sys.exit(done.returncode) if done.returncode else None\n"
        )
        return self.run_as(name, code, timeout=timeout)

    def run_in_new_kernel(self, name: str, code: str, timeout: float) -> str:
        kernel = self.request(f"user/{name}/api/kernels", method="POST", body={"name": "python3"})
        try:
            return execute(f"ws://127.0.0.1:{self.port}/user/{name}/api/kernels/{kernel['id']}/channels",
                           self.token, code, timeout)
        finally:
            self.request(f"user/{name}/api/kernels/{kernel['id']}", method="DELETE")

    def run_in_notebook(self, name: str, path: str, code: str, timeout: float = 300) -> str:
        """Run ``code`` in the kernel of a session for the notebook at ``path`` (in ``name``'s home), as
        JupyterLab starts one when the notebook is opened: its kernel knows the notebook (``JPY_SESSION_NAME``)."""
        self.start_server(name)
        body = {"path": path, "name": Path(path).name, "type": "notebook", "kernel": {"name": "python3"}}
        session = self.request(f"user/{name}/api/sessions", method="POST", body=body)
        try:
            kernel = session["kernel"]["id"]
            return execute(f"ws://127.0.0.1:{self.port}/user/{name}/api/kernels/{kernel}/channels",
                           self.token, code, timeout)
        finally:
            self.request(f"user/{name}/api/sessions/{session['id']}", method="DELETE")

    def log_tail(self, characters: int = 6000) -> str:
        return self.log.read_text(errors="replace")[-characters:]

    def stop_process(self) -> None:
        """The hub's process alone (SIGTERM, as Ctrl-C on ``make hub`` or a service manager sends): what it leaves
        running (servers, kernels, the proxy) is the configuration's choice (``cleanup_servers``, ``cleanup_proxy``)."""
        self.process.terminate()
        self.process.wait(timeout=60)  # it stops its managed services one by one first (0.8-1.0 s measured, 2 services)

    def stop_proxy(self) -> None:
        """The proxy, by its pid file, as an administrator would end it."""
        proxy_pid = self.state / "proxy.pid"
        if proxy_pid.exists():
            end_processes([int(proxy_pid.read_text().strip() or 0)])

    def relaunch(self, timeout: float = 120) -> None:
        """The hub started again on the same state, ports and token, its output appended to the same log."""
        environment = {**os.environ, "TFCOURSE_HUB_PREFIX": str(self.layout.prefix),
                       "TFCOURSE_HUB_PORT": str(self.port), "TFCOURSE_HUB_AUTH": self.auth,
                       "TFCOURSE_HUB_EXTRA_CONFIG": str(self.state / "test_config.py"),
                       "TFCOURSE_HUB_STATE": str(self.state)}
        self.log.parent.mkdir(parents=True, exist_ok=True)  # another run may have cleared the artifacts meanwhile
        with self.log.open("a") as handle:
            self.process = subprocess.Popen(
                [str(self.layout.env / "bin" / "jupyterhub"), "-f", str(self.config)],
                cwd=self.state, env=environment, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=ignore_interrupt if self.interrupt_ignored else None,
            )
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.request("hub/api/", timeout=5)
                return
            except (urllib.error.URLError, ConnectionError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    end_processes([self.process.pid])
                    self.process.wait(timeout=30)
                    exit_status = self.process.poll()
                    raise RuntimeError(f"the hub did not start (exit {exit_status}):\n{self.log_tail()}") from None
                time.sleep(0.5)

    def stop(self) -> None:
        try:
            users = self.request("hub/api/users")
        except (urllib.error.URLError, ConnectionError):  # the hub is down (a restart that failed): nothing to ask
            users = []
        for user in users:
            if user.get("server"):
                try:
                    self.request(f"hub/api/users/{user['name']}/server", method="DELETE")
                except urllib.error.URLError:
                    pass
        try:  # the proxy, managed services (ngshare) and servers it started: JupyterHub stops them as it exits ...
            started = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            started = []
        end_processes([self.process.pid])
        self.process.wait(timeout=30)  # reaped by psutil already: this records it, or Popen warns when collected
        # ... unless it died first, or one outlives it: ngshare services were found running long after their test.
        end_processes([process.pid for process in started if process.is_running()])
        proxy_pid = self.state / "proxy.pid"
        if proxy_pid.exists():
            end_processes([int(proxy_pid.read_text().strip() or 0)])
        # The hub leaves servers running as it exits (cleanup_servers=False): those the API could not stop (the hub
        # was down, or one outlived a restart) are found by the hub they answer to, and ended with their kernels.
        end_processes([process.pid for process in self.servers_still_running()])

    def servers_still_running(self) -> list[psutil.Process]:
        """The single-user servers (and what they started) whose hub's API is this hub's."""
        api = f"http://127.0.0.1:{self.port + 1}/"
        found = []
        for process in psutil.process_iter(["cmdline"]):
            try:
                server = any("jupyterhub-singleuser" in part for part in process.info["cmdline"] or [])
                if server and process.environ().get("JUPYTERHUB_API_URL", "").startswith(api):
                    found += [process, *process.children(recursive=True)]
            except psutil.Error:
                continue
        return found


def messages(connection: websocket.WebSocket, deadline: float) -> Iterator[dict]:
    """The messages on a kernel's channel until ``deadline`` (``time.monotonic()``), then TimeoutError; they end
    where the server closes the channel.

    Each read waits only for the time left, and a ping returns to the loop: websocket-client's ``recv()`` answers
    the server's pings (Jupyter's every 30 s) and reads on, so neither its socket timeout nor a deadline checked
    between messages ever fires while a kernel that never answers keeps its channel open (a CI run sat 20 minutes).
    """
    while (left := deadline - time.monotonic()) > 0:
        connection.settimeout(left)
        try:
            opcode, data = connection.recv_data(control_frame=True)
        except websocket.WebSocketTimeoutException:
            break
        except websocket.WebSocketConnectionClosedException:  # dropped without a close frame
            return
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return
        if opcode == websocket.ABNF.OPCODE_TEXT:
            yield json.loads(data)
    raise TimeoutError("the deadline passed")


def send_request(connection: websocket.WebSocket, msg_type: str, content: dict) -> str:
    """One request on the channel's shell; its message id."""
    session, msg_id = uuid.uuid4().hex, uuid.uuid4().hex
    header = {"msg_id": msg_id, "session": session, "username": "test", "msg_type": msg_type, "version": "5.3"}
    connection.send(json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": content,
                                "channel": "shell"}))
    return msg_id


def send_execute(connection: websocket.WebSocket, code: str) -> str:
    """One execute request on the channel; its message id."""
    content = {"code": code, "silent": False, "store_history": False, "user_expressions": {}, "allow_stdin": False}
    return send_request(connection, "execute_request", content)


def execute(url: str, token: str, code: str, timeout: float) -> str:
    """Jupyter's messaging protocol over the server's websocket: one execute request, its output (TimeoutError
    when the kernel has not finished in ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    connection = websocket.create_connection(url, header=[f"Authorization: token {token}"], timeout=timeout)
    output, error, answered = [], None, False
    try:
        msg_id = send_execute(connection, code)
        for reply in messages(connection, deadline):
            if reply.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            answered = True
            kind = reply["header"]["msg_type"]
            if kind == "stream":
                output.append(reply["content"]["text"])
            elif kind == "error":
                error = "\n".join(reply["content"]["traceback"])
            elif kind == "status" and reply["content"]["execution_state"] == "idle":
                break
        else:
            if answered:
                raise websocket.WebSocketConnectionClosedException("the channel closed while the code ran")
            raise KernelNeverAnswered("the server closed the channel before any reply to the request")
    except TimeoutError:
        raise TimeoutError(f"no answer from the kernel in {timeout} s; output so far: {''.join(output)}") from None
    finally:
        connection.close()
    if error:
        raise KernelError(f"{error}\noutput before it: {''.join(output)}")
    return "".join(output)


def fresh_layout(prefix: Path = TEST_PREFIX) -> HubLayout:
    """The test prefix without the last run's course, exchange, hub and ngshare state (environments kept)."""
    layout = HubLayout(prefix)
    for folder in (layout.course, layout.exchange, layout.state, layout.prefix / "state-lti", layout.ngshare_state):
        shutil.rmtree(folder, ignore_errors=True)
    return layout


def ignore_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start_hub(layout: HubLayout, log: Path, auth: str = "pam", state: Path | None = None, timeout: float = 120,
              interrupt_ignored: bool = False, config: Path = CONFIG) -> Hub:
    """The course's hub (or the one ``config`` sets up) on free ports, logging in with ``auth``, its database and
    secrets in ``state``."""
    port, token, state = free_port_block(), secrets.token_hex(16), state or layout.state
    state.mkdir(mode=0o700, exist_ok=True)
    (state / "test_config.py").write_text(EXTRA_CONFIG.format(service=SERVICE, token=token))
    log.write_text("")
    hub = Hub(layout, port, token, None, log, state, auth, interrupt_ignored, config)
    hub.relaunch(timeout)
    return hub


def free_port_block() -> int:
    """A free port whose next three are free too: the hub's API, the proxy's API and ngshare's."""
    return free_port(following=3)
