"""A student's kernel answers after every (re)start where another process takes one of its ports
(classroom/kernel_ports.py): after it was killed mid-cell (as the out-of-memory killer stops it), and in the second or
two a new kernel takes to bind the ports jupyter_client chose for it. jupyter_client's own manager, on the same events,
drops the kernel (the shell port) or leaves it alive and silent (a later port).

Real kernels (ipykernel) under jupyter_server's kernel manager, with its automatic restarter polling every 3 s (the
server's default), a start counted stable after 5 s (the default is 10 s) and 10 s for a new kernel's first answer
(``kernel_info_timeout``, 60 s by default). The process that takes a port in a kernel's start is a Python process of
its own: it binds the port the kernel's connection file names as soon as the file is written, well before the kernel
binds it. On the hub another student's process cannot read that file; it takes the same port by chance (each
student's server keeps its own cache of the ports it handed out) or, after a kill, by watching ``/proc/net/tcp``.

The tests that start kernels are marked slow (``make test`` runs them, ``make test-fast`` does not): each mostly waits
on the restarter's poll and the first-answer timeout, 7 to 27 s of a worker for about 1 s of CPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from traitlets.config import Config

from classroom.kernel_ports import FreshPortsKernelManager
from classroom.layout import HubLayout
from classroom.provision import RUNTIME_PARTS, STUDENT_KERNEL_MANAGER, write_config

REPO = Path(__file__).resolve().parents[2]
STOCK = "jupyter_server.services.kernels.kernelmanager.ServerKernelManager"
COURSE = STUDENT_KERNEL_MANAGER["MappingKernelManager"]["kernel_manager_class"]
TIME_TO_DEAD = 3.0  # the restarter's poll, the server's default
FIRST_ANSWER = 10.0  # kernel_info_timeout: how long a new kernel has to answer
# The competing process: it takes the port named ``port_name`` in a kernel's connection file as soon as the file names
# one, and again each time the file is rewritten with another, ``takes`` ports in all; it says which it took ("took"),
# and which the kernel had bound first ("lost"). It holds them until it is killed (300 s at most).
COMPETITOR = """
import json, socket, sys, time
connection_file, port_name, takes = sys.argv[1], sys.argv[2], int(sys.argv[3])
seen, held, deadline = set(), [], time.monotonic() + 300
while len(seen) < takes and time.monotonic() < deadline:
    try:
        with open(connection_file) as written:
            port = json.load(written)[port_name]
    except (OSError, ValueError, KeyError):  # not written yet, or being rewritten
        port = None
    if port and port not in seen:
        seen.add(port)
        taker = socket.socket()
        try:
            taker.bind(("127.0.0.1", port))
            taker.listen(1)
            held.append(taker)
            print("took", port, flush=True)
        except OSError:
            print("lost", port, flush=True)
    time.sleep(0.001)
time.sleep(max(0.0, deadline - time.monotonic()))
"""


@dataclass
class NextCell:
    """What the student's next cell met after another process took some of the kernel's ports."""

    taken: list[int]  # the ports the other process took
    dropped: bool  # the server gave up restarting the kernel and removed it
    ports: list[int] = field(default_factory=list)  # the kernel's, at that cell
    answer: str | None = None  # its output for the cell, run on a new client (None: no answer)
    alive: bool = True  # whether the kernel's process lived (when it did not answer)
    state: str | None = None  # what the server recorded of the kernel after that cell


def kernel_manager(manager_class: str, restart_limit: int = 5) -> AsyncMappingKernelManager:
    """A server's kernels: each managed by ``manager_class``; a dead kernel restarted ``restart_limit`` times."""
    config = Config()
    config.AsyncMappingKernelManager.kernel_manager_class = manager_class
    config.AsyncMappingKernelManager.kernel_info_timeout = FIRST_ANSWER
    config.KernelRestarter.time_to_dead = TIME_TO_DEAD
    config.KernelRestarter.stable_start_time = 5.0  # longer than a kernel that cannot bind lives (about 2 s here)
    config.KernelRestarter.restart_limit = restart_limit
    return AsyncMappingKernelManager(config=config)


async def until(condition: Callable[[], object], what: str, seconds: float, must: bool = True) -> None:
    """Wait for ``condition`` (AssertionError after ``seconds``, or just return when not ``must``)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            assert not must, f"waited {seconds} s for {what}"
            return
        await asyncio.sleep(0.1)


async def run_cell(kernel, code: str, seconds: float) -> str:
    """One execute request on a new client; its stdout (TimeoutError, or jupyter_client's RuntimeError when the
    kernel died or did not answer, after ``seconds``)."""
    client = kernel.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=seconds)
        output: list[str] = []

        def keep(message: dict) -> None:
            if message["header"]["msg_type"] == "stream":
                output.append(message["content"]["text"])

        await client.execute_interactive(code, output_hook=keep, timeout=seconds)
        return "".join(output)
    finally:
        client.stop_channels()


async def next_cell(kernels, kernel_id: str, restarted: Callable[[], bool], dropped: list[bool], taken: list[int],
                    seconds: float) -> NextCell:
    """The student's next cell, on a new client as JupyterLab opens one to a restarted kernel, once the kernel
    restarted (or ``seconds`` passed); what it met."""
    kernel = kernels.get_kernel(kernel_id)
    await until(lambda: dropped or restarted(), "the kernel to restart on new ports", seconds, must=False)
    if dropped or kernel_id not in kernels:
        return NextCell(taken, dropped=True)
    await asyncio.wait_for(asyncio.shield(kernel.ready), 60)  # JupyterLab's new channel opens once it is ready
    try:
        answer = await run_cell(kernel, "print('after')", 20)
    except (TimeoutError, RuntimeError):
        return NextCell(taken, dropped=False, ports=kernel.ports, answer=None, alive=await kernel.is_alive())
    await until(lambda: kernel.execution_state == "idle", "the server to see the new kernel idle", 10, must=False)
    return NextCell(taken, dropped=False, ports=kernel.ports, answer=answer, state=kernel.execution_state)


async def shut_down(kernels) -> None:
    for started in list(kernels._kernels.values()):  # a (re)start under way ends first: its answer check
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(started.ready), 90)
    await asyncio.wait_for(kernels.shutdown_all(now=True), 60)
    # What the server keeps open of a kernel it dropped (its activity stream, its control socket) would otherwise
    # hold the interpreter's exit in the sockets' context's term for ever (pytest's last garbage collection).
    kernels.context.destroy(linger=0)


async def take_when_free(hold: socket.socket, ip: str, port: int, seconds: float) -> None:
    """Bind and listen on ``port`` as soon as it is free, as a process watching for it would."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            hold.bind((ip, port))
            break
        except OSError:
            assert time.monotonic() < deadline, f"the killed kernel's port {port} was not free after {seconds} s"
            await asyncio.sleep(0.01)
    hold.listen(1)


async def kill_with_a_port_held(manager_class: str, port_name: str, hold: socket.socket) -> NextCell:
    kernels = kernel_manager(manager_class)
    kernel_id = await kernels.start_kernel(kernel_name="python3")
    try:
        kernel = kernels.get_kernel(kernel_id)
        await asyncio.wait_for(kernel.ready, 60)
        await until(lambda: not kernel._restarter._initial_startup, "a stable start", 60)
        dropped: list[bool] = []
        kernel.add_restart_callback(lambda: dropped.append(True), "dead")
        await run_cell(kernel, "print('before')", 60)
        busy = kernel.client()  # a long cell, as the one stopped past the memory limit
        busy.start_channels()
        busy.execute("import time; time.sleep(600)")
        await until(lambda: kernel.execution_state == "busy", "the long cell to start", 30)
        busy.stop_channels()
        held_port = getattr(kernel, port_name)
        os.kill(kernel.provisioner.pid, signal.SIGKILL)
        await take_when_free(hold, kernel.ip, held_port, 10)
        # The restarter's attempts: a kernel that cannot bind its shell port stops at once (five times, then the
        # server drops it); one that bound its shell port first hangs, alive, on the next port's error.
        restarted = lambda: getattr(kernel, port_name) != held_port and kernel.has_kernel  # noqa: E731
        return await next_cell(kernels, kernel_id, restarted, dropped, [held_port], 30)
    finally:
        await shut_down(kernels)


async def start_while_a_process_takes(manager_class: str, port_name: str, seconds: float, takes: int = 1,
                                      restart_limit: int = 5) -> NextCell:
    """A kernel started while the competing process takes its ``port_name`` (``takes`` times: each new one); the next
    cell once the kernel restarted on new ports, or was dropped (after ``seconds`` at most). With ``takes`` past
    ``restart_limit``, only its drop is waited for."""
    kernels = kernel_manager(manager_class, restart_limit)
    kernel_id = str(uuid.uuid4())
    command = [sys.executable, "-c", COMPETITOR, f"kernel-{kernel_id}.json", port_name, str(takes)]
    competitor = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        await asyncio.wait_for(kernels.start_kernel(kernel_name="python3", kernel_id=kernel_id), 60)
        kernel = kernels.get_kernel(kernel_id)
        dropped: list[bool] = []
        kernel.add_restart_callback(lambda: dropped.append(True), "dead")
        first = kernel.ports
        restarted = lambda: takes <= restart_limit and kernel.ports != first and kernel.has_kernel  # noqa: E731
        after = await next_cell(kernels, kernel_id, restarted, dropped, [], seconds)
    finally:
        competitor.kill()
        said = competitor.communicate(timeout=30)[0].split()
        await shut_down(kernels)
    after.taken = [int(port) for word, port in zip(said[::2], said[1::2], strict=True) if word == "took"]
    assert after.taken, f"the competing process took no port of the kernel's (it said {said}): the test proves nothing"
    return after


def run_alone(coroutine: Coroutine) -> object:
    """``coroutine`` on an event loop of its own thread: a test worker may already run one (a browser test's)."""
    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(asyncio.run, coroutine).result(timeout=300)
    finally:
        pool.shutdown(wait=False)  # a coroutine that hangs fails the test at the deadline, not at pytest-timeout's


@pytest.fixture
def connection_files(tmp_path, monkeypatch) -> Path:
    """The kernels' connection files (a killed kernel's stays) in a tmp folder: the working one."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def holder(connection_files):
    """A socket to hold a port with."""
    with socket.socket() as hold:
        hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        yield hold


@pytest.mark.slow
@pytest.mark.parametrize("port_name", ["shell_port", "iopub_port"])
def test_a_kernel_killed_while_another_process_takes_its_port_restarts_on_new_ports(port_name, holder) -> None:
    after = run_alone(kill_with_a_port_held(COURSE, port_name, holder))
    assert not after.dropped, (
        f"the kernel was dropped after its restarts on the held port {after.taken}: the student's notebook "
        "would show it dead, and neither run a cell nor restart it"
    )
    assert not set(after.taken) & set(after.ports), after
    assert after.answer == "after\n", f"the restarted kernel's answer to print('after'): {after.answer!r}"
    assert after.state == "idle", (
        f"the server recorded the restarted kernel as {after.state!r}: it no longer watches the kernel's messages "
        "after its restart on new ports (the dead kernel's state stays)"
    )


@pytest.mark.slow
def test_jupyter_s_own_restart_on_a_taken_shell_port_fails_and_the_server_drops_the_kernel(holder) -> None:
    """Why classroom/kernel_ports.py restarts on new ports: the installed jupyter_client restarts on the same ones.
    Should this fail after an upgrade, jupyter_client chooses new ports itself. (Held, the IOPub port leaves a live
    kernel that never answers: it bound its shell port, then hung as it exited on the error.)"""
    after = run_alone(kill_with_a_port_held(STOCK, "shell_port", holder))
    assert after.dropped, f"jupyter_client's own restart got past the held port: {after}"


@pytest.mark.slow
@pytest.mark.parametrize("port_name", ["shell_port", "iopub_port"])
def test_a_port_taken_while_the_kernel_starts_leaves_no_silent_kernel(port_name, connection_files) -> None:
    """The shell port taken: the kernel stops at once; a later one: it hangs, alive, and is stopped when it has not
    answered in the server's kernel_info_timeout. Either way the restarter starts it again, on new ports."""
    after = run_alone(start_while_a_process_takes(COURSE, port_name, seconds=FIRST_ANSWER + TIME_TO_DEAD + 20))
    assert not after.dropped, f"the kernel was dropped, though only its first start lost a port: {after}"
    assert after.answer == "after\n", (
        f"the student's next cell (print('after')) got {after.answer!r} from the kernel (alive: {after.alive}) "
        f"started while another process took its {port_name} {after.taken}: is the kernel's first answer still "
        f"awaited (FreshPortsKernelManager._async_post_start_kernel)? {after}"
    )
    assert not set(after.taken) & set(after.ports), after
    assert after.state == "idle", f"the server recorded the restarted kernel as {after.state!r}"


@pytest.mark.slow
def test_jupyter_s_own_kernel_started_while_its_iopub_port_is_taken_stays_alive_and_silent(connection_files) -> None:
    """Why classroom/kernel_ports.py awaits a new kernel's first answer: jupyter_client's restarter watches only the
    process, which lives on (ipykernel hangs as it exits on the error). Should this fail after an upgrade (ipykernel
    exits, or jupyter_client lets the kernel choose its ports: JEP 66), the wait may go."""
    after = run_alone(start_while_a_process_takes(STOCK, "iopub_port", seconds=5))
    assert after.answer is None and after.alive, f"jupyter_client's own kernel answered, or died: {after}"


@pytest.mark.slow
def test_a_kernel_whose_every_start_loses_a_port_ends_dead_not_silent(connection_files) -> None:
    """The bound: a process that takes each new kernel's IOPub port in turn. Each start is stopped unanswered, and
    past the restarter's limit the server drops the kernel, which JupyterLab shows dead ("Kernel is dead")."""
    restart_limit = 1
    seconds = (FIRST_ANSWER + TIME_TO_DEAD) * (restart_limit + 1) + 20
    after = run_alone(start_while_a_process_takes(COURSE, "iopub_port", seconds, takes=99, restart_limit=restart_limit))
    assert after.dropped, f"the kernel was not dropped in {seconds} s though every start lost its IOPub port: {after}"
    assert len(after.taken) == restart_limit + 1, f"the competing process took {after.taken}: one port per start"


def test_student_servers_use_it_on_the_hub_and_on_kubernetes(tmp_path: Path) -> None:
    module, name = COURSE.rsplit(".", 1)
    assert getattr(__import__(module, fromlist=[name]), name) is FreshPortsKernelManager
    layout = HubLayout(tmp_path)
    write_config(layout)
    hub_student = json.loads((layout.role_config("student") / "jupyter_server_config.json").read_text())
    assert hub_student["MappingKernelManager"] == STUDENT_KERNEL_MANAGER["MappingKernelManager"]
    assert "classroom/kernel_ports.py" in RUNTIME_PARTS  # what a student's server imports
    student_role = REPO / "classroom" / "k8s" / "jupyter" / "roles" / "student" / "jupyter_server_config.json"
    k8s_student = json.loads(student_role.read_text())
    assert k8s_student["MappingKernelManager"] == STUDENT_KERNEL_MANAGER["MappingKernelManager"]
    dockerfile = (REPO / "classroom" / "k8s" / "Dockerfile").read_text()
    assert "COPY classroom/__init__.py classroom/kernel_ports.py /opt/tfcourse/runtime/classroom/" in dockerfile
