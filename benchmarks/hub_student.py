"""One simulated student on the classroom hub, as their browser would ask it: over the hub's REST API, Jupyter
Server's and the kernel's channels (the steps: docs/running-a-class.md, "How many students one machine serves").
Each cell's latency runs from the ``execute_request`` sent on the kernel's websocket to its ``execute_reply``: what
the student waits for, queueing on a busy machine included.

Every request carries one token (the hub's service token with ``admin:servers`` and ``access:servers``): the hub
routes it to the student's own server, which runs as the student.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from dataclasses import asdict, dataclass, field
from urllib.parse import quote, urlencode

import nbformat
from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from autograder.course.notebooks import fill_answers, reference_answers
from autograder.course.settings import release_notebook, source_notebook
from classroom.layout import COURSE_ID

AsyncHTTPClient.configure(None, max_clients=1000)  # one client for the whole class: no queue in the driver


@dataclass(frozen=True)
class Pace:
    """How the simulated students work: seconds of thought between cells, and how many cells they run."""

    think_seconds: float = 3.0  # the mean; each pause is drawn from 0.5x to 1.5x of it
    cells: int | None = None  # the first ``cells`` code cells of each notebook (None: all)
    validate: bool = True
    leave_kernel_open: bool = True  # a student closes the tab without shutting the kernel down, as most do


@dataclass
class CellTiming:
    student: str
    assignment: str
    cell: int  # its index among the notebook's code cells
    seconds: float
    status: str  # the execute_reply's: ok, error, or "no reply" when the channel closed or timed out
    error: str = ""


@dataclass
class StudentRecord:
    """What one student's session saw: every cell's latency, each step's seconds, and what went wrong."""

    name: str
    cells: list[CellTiming] = field(default_factory=list)
    steps: dict[str, float] = field(default_factory=dict)  # "spawn", "fetch 01_attention", ... -> seconds
    failures: list[str] = field(default_factory=list)
    submitted: list[str] = field(default_factory=list)  # the assignments whose submit the server said succeeded

    def as_dict(self) -> dict:
        return asdict(self)


def answered_notebook(assignment: str) -> nbformat.NotebookNode:
    """The released notebook with every answer cell filled in (the reference's), as a student who knows them."""
    answers = reference_answers(nbformat.read(source_notebook(assignment), as_version=4))
    return fill_answers(nbformat.read(release_notebook(assignment), as_version=4), answers)


class HubStudent:
    """One student's session against the hub at ``hub_url``; :meth:`work` runs it, :attr:`record` keeps what it saw."""

    def __init__(self, hub_url: str, token: str, name: str, notebooks: dict[str, nbformat.NotebookNode], pace: Pace,
                 seed: int = 0, cell_timeout: float = 600) -> None:
        self.hub_url, self.token, self.name = hub_url.rstrip("/"), token, name
        self.notebooks, self.pace = notebooks, pace
        self.random = random.Random(f"{seed}:{name}")
        self.cell_timeout = cell_timeout
        self.record = StudentRecord(name)
        self.client = AsyncHTTPClient()

    # The REST calls -------------------------------------------------------------------------------------------

    async def request(self, path: str, method: str = "GET", body: object = None, timeout: float = 600) -> object:
        data = json.dumps(body) if body is not None else ("" if method in ("POST", "PUT") else None)
        request = HTTPRequest(
            f"{self.hub_url}/{path.lstrip('/')}", method=method, body=data, request_timeout=timeout,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        response = await self.client.fetch(request)
        return json.loads(response.body) if response.body else None

    def server(self, path: str) -> str:
        return f"user/{quote(self.name)}/{path.lstrip('/')}"

    async def spawn(self, timeout: float = 300) -> None:
        """The student's server started, as a login would start it, and answering."""
        try:
            await self.request(f"hub/api/users/{self.name}", method="POST")
        except HTTPClientError as error:
            if error.code != 409:  # 409: the hub knows the student already
                raise
        try:
            await self.request(f"hub/api/users/{self.name}/server", method="POST")
        except HTTPClientError as error:
            if error.code != 400:  # 400: already running or starting
                raise
        deadline = time.monotonic() + timeout
        while True:
            user = await self.request(f"hub/api/users/{self.name}")
            if user.get("server") and not user.get("pending"):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}'s server did not start in {timeout:g} s (the hub says {user})")
            await asyncio.sleep(0.5)

    async def assignment_action(self, action: str, assignment: str) -> object:
        """nbgrader's Assignments tab: fetch or submit ``assignment``; raises with nbgrader's message when it fails."""
        query = urlencode({"course_id": COURSE_ID, "assignment_id": assignment})
        answer = await self.request(self.server(f"assignments/{action}?{query}"), method="POST")
        if isinstance(answer, dict) and not answer.get("success", True):
            raise RuntimeError(f"{action} of {assignment} failed: {str(answer.get('value'))[-1500:]}")
        return answer

    async def validate(self, path: str) -> None:
        answer = await self.request(self.server(f"assignments/validate?{urlencode({'path': path})}"), method="POST")
        passed = isinstance(answer, dict) and answer.get("success")
        value = answer.get("value") if isinstance(answer, dict) else answer
        if not passed or (isinstance(value, dict) and {"failed", "changed", "type_changed"} & set(value)):
            raise RuntimeError(f"validate of {path} did not pass: {str(value)[-1500:]}")

    # The kernel's channels ------------------------------------------------------------------------------------

    async def execute(self, channel: WebSocketClientConnection, code: str) -> tuple[str, str]:
        """One execute_request on ``channel``; its reply's status and the error's name, or "no reply"."""
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "session": uuid.uuid4().hex, "username": self.name,
                  "msg_type": "execute_request", "version": "5.3"}
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False}
        await channel.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {},
                                                "content": content, "channel": "shell"}))
        while True:
            raw = await channel.read_message()
            if raw is None:
                return "no reply", "the kernel's channel closed before the reply"
            if isinstance(raw, bytes):  # a message with binary buffers (a widget's): never a reply
                continue
            message = json.loads(raw)
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if message["header"]["msg_type"] == "execute_reply":
                reply = message["content"]
                return reply["status"], f"{reply.get('ename', '')}: {reply.get('evalue', '')}"[:300]

    async def run_notebook(self, assignment: str, path: str) -> None:
        """Open the notebook (a session and its kernel) and run its code cells at the student's pace."""
        body = {"path": path, "name": path.rsplit("/", 1)[-1], "type": "notebook", "kernel": {"name": "python3"}}
        session = await self.request(self.server("api/sessions"), method="POST", body=body)
        channels = self.server(f"api/kernels/{session['kernel']['id']}/channels")
        url = f"{self.hub_url.replace('http', 'ws', 1)}/{channels}"
        channel = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {self.token}"}),
                                          max_message_size=256 * 2**20)
        try:
            code_cells = [cell.source for cell in self.notebooks[assignment].cells if cell.cell_type == "code"]
            for index, code in enumerate(code_cells[: self.pace.cells]):
                if index:
                    await asyncio.sleep(self.pace.think_seconds * self.random.uniform(0.5, 1.5))
                started = time.monotonic()
                try:
                    status, error = await asyncio.wait_for(self.execute(channel, code), self.cell_timeout)
                except TimeoutError:
                    status, error = "no reply", f"no reply in {self.cell_timeout:g} s"
                timing = CellTiming(self.name, assignment, index, time.monotonic() - started, status)
                if status != "ok":
                    timing.error = error
                    self.record.failures.append(f"{assignment} cell {index}: {status} ({error})")
                self.record.cells.append(timing)
                if status == "no reply":
                    return
        finally:
            channel.close()
            if not self.pace.leave_kernel_open:
                await self.request(self.server(f"api/sessions/{session['id']}"), method="DELETE")

    # The session ----------------------------------------------------------------------------------------------

    async def step(self, name: str, work) -> bool:
        """Run one step, timing it; a failure is recorded (the student goes on to nothing else of it)."""
        started = time.monotonic()
        try:
            await work
        except Exception as error:  # every failure of a simulated student is a measurement
            self.record.failures.append(f"{name}: {type(error).__name__}: {str(error)[-1500:]}")
            return False
        finally:
            self.record.steps[name] = round(time.monotonic() - started, 2)
        return True

    async def work(self) -> StudentRecord:
        if not await self.step("spawn", self.spawn()):
            return self.record
        for assignment, notebook in self.notebooks.items():
            path = f"{assignment}/{assignment}.ipynb"
            if not await self.step(f"fetch {assignment}", self.assignment_action("fetch", assignment)):
                continue
            content = {"type": "notebook", "format": "json", "content": json.loads(nbformat.writes(notebook))}
            if not await self.step(f"save {assignment}", self.request(self.server(f"api/contents/{path}"),
                                                                       method="PUT", body=content)):
                continue
            await self.step(f"cells {assignment}", self.run_notebook(assignment, path))
            if self.pace.validate:
                await self.step(f"validate {assignment}", self.validate(path))
            if await self.step(f"submit {assignment}", self.assignment_action("submit", assignment)):
                self.record.submitted.append(assignment)
        return self.record
