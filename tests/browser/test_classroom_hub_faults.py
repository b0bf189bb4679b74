"""The classroom hub's faults clean up after themselves: a killed hub leaves none of its services running beside
the next hub's, and a hub asked to stop (SIGTERM, as Ctrl-C on ``make hub`` or a service manager sends) stops
within seconds.

The course's hub (``classroom/jupyterhub_config.py``, see testbed/hub.py) on a fresh layout, with its two
services as ``make hub`` runs them: the idle culler and the student-view. It is started as a script's background
job would start it (``make hub &``: SIGINT ignored), the harder case: JupyterHub stops each service with SIGINT
first. No student is needed. It runs the hub as root: elsewhere it skips.
"""

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from classroom.provision import provision
from testbed.hub import Hub, fresh_layout, start_hub
from testbed.lab import end_processes

pytestmark = pytest.mark.slow
SERVICES = ("idle-culler", "student-view")  # what make hub runs with the filesystem exchange
STOP_DEADLINE = 10  # seconds for a hub to stop on SIGTERM (0.8-1.0 s measured; 61 s before its services took SIGINT)
GONE_DEADLINE = 10  # seconds for a killed hub's services to end


@pytest.fixture(scope="module")
def hub(artifacts: Path) -> Iterator[Hub]:
    if os.geteuid() != 0:
        pytest.skip("the classroom hub runs each server as its user's system account: root only (CI runs as root)")
    folder = artifacts / "hub-faults"
    folder.mkdir(parents=True, exist_ok=True)
    layout = fresh_layout()
    provision(layout, [], refresh_course=True)
    running = start_hub(layout, folder / "jupyterhub.log", interrupt_ignored=True)  # as `make hub &` in a script
    try:
        yield running
    finally:
        running.stop()


def services_of(hub: Hub) -> dict[str, list[psutil.Process]]:
    """The processes of each managed service (by name) that answer to this hub's API."""
    api = f"http://127.0.0.1:{hub.port + 1}/"
    found: dict[str, list[psutil.Process]] = {name: [] for name in SERVICES}
    for process in psutil.process_iter():
        try:
            environment = process.environ()
            if environment.get("JUPYTERHUB_API_URL", "").startswith(api) and process.status() != psutil.STATUS_ZOMBIE:
                found.setdefault(environment.get("JUPYTERHUB_SERVICE_NAME", ""), []).append(process)
        except psutil.Error:
            continue
    return {name: processes for name, processes in found.items() if name in SERVICES}


def wait_for_one_of_each(hub: Hub, deadline: float) -> dict[str, list[psutil.Process]]:
    """The services once each runs as one process (the hub starts them just after its API answers)."""
    while True:
        services = services_of(hub)
        counts = {name: len(processes) for name, processes in services.items()}
        if all(count == 1 for count in counts.values()):
            return services
        assert time.monotonic() < deadline, f"expected one process of each service, found {counts}:\n{hub.log_tail()}"
        time.sleep(0.5)


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def record(hub: Hub, name: str, value: object) -> None:
    path = hub.log.parent / "measured.json"
    measured = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**measured, name: value}, indent=1))


def test_a_killed_hub_leaves_no_service_beside_the_next_hub_s(hub: Hub) -> None:
    """SIGKILL to the hub's process (the machine's out-of-memory killer, ``kill -9``): its services end with it, and
    the hub started again on the same state runs exactly one process of each service."""
    before = wait_for_one_of_each(hub, time.monotonic() + 60)
    old = [process for processes in before.values() for process in processes]
    hub.process.send_signal(signal.SIGKILL)
    hub.process.wait(timeout=30)
    killed = time.monotonic()
    try:
        while left := [process for process in old if alive(process)]:
            assert time.monotonic() - killed < GONE_DEADLINE, (
                f"{len(left)} of the killed hub's services still run {GONE_DEADLINE} s after it: "
                f"{[' '.join(process.cmdline()[:4]) for process in left]}"
            )
            time.sleep(0.2)
        record(hub, "services of a SIGKILLed hub ended after (s)", round(time.monotonic() - killed, 1))
    finally:  # those that outlived it must not outlive the test; the next test needs a hub
        end_processes([process.pid for process in old if alive(process)])
        hub.relaunch()
    after = wait_for_one_of_each(hub, time.monotonic() + 60)
    time.sleep(3)  # one that outlived the kill would show now beside the new one
    counts = {name: len(processes) for name, processes in services_of(hub).items()}
    record(hub, "service processes after the restart", counts)
    assert counts == dict.fromkeys(SERVICES, 1), f"after the restart: {counts}"
    assert not {p.pid for ps in after.values() for p in ps} & {p.pid for p in old}, "a service was not started anew"


def test_a_hub_stops_within_seconds(hub: Hub) -> None:
    """SIGTERM: the hub stops its services and exits, leaving the servers and the proxy (cleanup_servers=False)."""
    services = wait_for_one_of_each(hub, time.monotonic() + 60)
    started = time.monotonic()
    hub.process.terminate()
    try:
        hub.process.wait(timeout=120)
    finally:
        seconds = round(time.monotonic() - started, 1)
        record(hub, "hub stop on SIGTERM (s)", seconds)
        said = hub.log_tail()
        hub.relaunch()  # for the fixture's stop
    assert seconds < STOP_DEADLINE, f"the hub took {seconds} s to stop on SIGTERM:\n{said}"
    assert not any(alive(process) for processes in services.values() for process in processes), "a service outlived it"
