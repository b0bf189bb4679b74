"""A student's kernel, killed mid-cell (as the out-of-memory killer stops it), comes back on new ports where
another process took one of its own meanwhile (classroom/kernel_ports.py); jupyter_client's own restarts, on the
same ports fail (the server drops the kernel, or a live kernel never answers).

Real kernels (ipykernel) under jupyter_server's kernel manager, with its automatic restarter polling every 3 s (the
server's default) and a start counted stable after 5 s (the default is 10 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from traitlets.config import Config

from classroom.kernel_ports import FreshPortsKernelManager, port_taken
from classroom.layout import HubLayout
from classroom.provision import RUNTIME_PARTS, STUDENT_KERNEL_MANAGER, write_config

REPO = Path(__file__).resolve().parents[2]
STOCK = "jupyter_server.services.kernels.kernelmanager.ServerKernelManager"
COURSE = STUDENT_KERNEL_MANAGER["MappingKernelManager"]["kernel_manager_class"]


@dataclass
class AfterTheKill:
    """What became of a kernel killed mid-cell while another process held its IOPub port."""

    held_port: int
    dropped: bool  # the server gave up restarting it and removed it
    ports: list[int] = field(default_factory=list)  # the restarted kernel's
    answer: str | None = None  # its output for a cell run on a new client (None: no answer in 30 s)
    alive: bool = True  # whether the kernel's process lived (when it did not answer)
    state: str | None = None  # what the server recorded of the kernel after that cell


async def until(condition, what: str, seconds: float, must: bool = True) -> None:
    """Wait for ``condition`` (AssertionError after ``seconds``, or just return when not ``must``)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            assert not must, f"waited {seconds} s for {what}"
            return
        await asyncio.sleep(0.1)


async def run_cell(kernel, code: str, seconds: float) -> str:
    """One execute request on a new client; its stdout (TimeoutError after ``seconds``)."""
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


async def kill_with_a_port_held(manager_class: str, port_name: str, hold: socket.socket) -> AfterTheKill:
    config = Config()
    config.AsyncMappingKernelManager.kernel_manager_class = manager_class
    config.KernelRestarter.time_to_dead = 3.0  # the server's default: the port is taken before the restart
    config.KernelRestarter.stable_start_time = 5.0  # longer than a kernel that cannot bind lives (about 2 s here)
    kernels = AsyncMappingKernelManager(config=config)
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
        await until(lambda: not port_taken(kernel.ip, held_port), "the killed kernel's port to be free", 10)
        hold.bind((kernel.ip, held_port))
        hold.listen(1)
        # The restarter's attempts: a kernel that cannot bind its shell port stops at once (five times, then the
        # server drops it); one that bound its shell port first hangs, alive, on the next port's error.
        restarted = lambda: dropped or (getattr(kernel, port_name) != held_port and kernel.has_kernel)  # noqa: E731
        await until(restarted, "the kernel to restart on new ports", 30, must=False)
        if dropped or kernel_id not in kernels:
            return AfterTheKill(held_port, dropped=True)
        try:
            answer = await run_cell(kernel, "print('after')", 30)
        except TimeoutError:
            alive = await kernel.is_alive()
            return AfterTheKill(held_port, dropped=False, ports=kernel.ports, answer=None, alive=alive)
        await until(lambda: kernel.execution_state == "idle", "the server to see the new kernel idle", 10, must=False)
        return AfterTheKill(held_port, dropped=False, ports=kernel.ports, answer=answer, state=kernel.execution_state)
    finally:
        for started in list(kernels._kernels.values()):  # a (re)start under way ends first: its answer check
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(started.ready), 90)
        await asyncio.wait_for(kernels.shutdown_all(now=True), 60)


def run_alone(coroutine: Coroutine) -> object:
    """``coroutine`` on an event loop of its own thread: a test worker may already run one (a browser test's)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=300)


@pytest.fixture
def holder(tmp_path, monkeypatch):
    """A socket to hold a port with; the kernels' connection files (a killed kernel's stays) in a tmp folder."""
    monkeypatch.chdir(tmp_path)
    with socket.socket() as hold:
        hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        yield hold


@pytest.mark.parametrize("port_name", ["shell_port", "iopub_port"])
def test_a_kernel_killed_while_another_process_takes_its_port_restarts_on_new_ports(port_name, holder) -> None:
    after = run_alone(kill_with_a_port_held(COURSE, port_name, holder))
    assert not after.dropped, (
        f"the kernel was dropped after its restarts on the held port {after.held_port}: the student's notebook "
        "would show it dead, and neither run a cell nor restart it"
    )
    assert after.held_port not in after.ports, after
    assert after.answer == "after\n", f"the restarted kernel's answer to print('after'): {after.answer!r}"
    assert after.state == "idle", (
        f"the server recorded the restarted kernel as {after.state!r}: it no longer watches the kernel's messages "
        "after its restart on new ports (the dead kernel's state stays)"
    )


def test_jupyter_s_own_restart_on_a_taken_shell_port_fails_and_the_server_drops_the_kernel(holder) -> None:
    """Why classroom/kernel_ports.py exists: the installed jupyter_client restarts on the same ports. Should this
    fail after an upgrade, jupyter_client chooses new ports itself and the course's class may go. (Held, the IOPub
    port leaves a live kernel that never answers: it bound its shell port, then hung as it exited on the error.)"""
    after = run_alone(kill_with_a_port_held(STOCK, "shell_port", holder))
    assert after.dropped, f"jupyter_client's own restart got past the held port: {after}"


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
