"""The hub tests' kernel channel (``testbed/hub.py:execute``) against a stand-in server.

A channel the server closes before any reply to the request is ``KernelNeverAnswered`` (the code
never ran, and ``Hub.run_as`` may run it once more in a fresh kernel); one closed after the kernel
answered is an error as it was, so code that started is never run twice. A channel the server keeps
open with pings while the kernel never answers (an out-of-memory restart, a CI run held 20 minutes)
ends at the request's deadline.
"""

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import tornado.ioloop
import tornado.web
import tornado.websocket
import websocket

from testbed.hub import KernelNeverAnswered, execute
from testbed.lab import free_port


class Channel(tornado.websocket.WebSocketHandler):
    """Closes the channel at once (``"close"``), after one stream message in reply to the request (``"answer"``),
    or never, pinging every 0.1 s and never replying (``"ping"``), the pongs counted in ``pongs``."""

    def initialize(self, behaviour: str, pongs: list[bytes]) -> None:
        self.behaviour, self.pongs = behaviour, pongs

    def open(self) -> None:
        if self.behaviour == "ping":
            self.pinging = tornado.ioloop.PeriodicCallback(self.ping, 100)
            self.pinging.start()

    def on_pong(self, data: bytes) -> None:
        self.pongs.append(data)

    def on_close(self) -> None:
        if self.behaviour == "ping":
            self.pinging.stop()

    def on_message(self, message: str | bytes) -> None:
        if self.behaviour == "ping":
            return
        request = json.loads(message)
        if self.behaviour == "answer":
            reply = {"header": {"msg_type": "stream"}, "parent_header": request["header"],
                     "content": {"name": "stdout", "text": "started\n"}}
            self.write_message(json.dumps(reply))
        self.close()


@pytest.fixture
def channel_url() -> Iterator[Callable[..., str]]:
    loop, started, servers = asyncio.new_event_loop(), threading.Event(), []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert started.wait(timeout=10), "the stand-in server's event loop did not start in 10 s"

    def url(behaviour: str, pongs: list[bytes] | None = None) -> str:
        port, listening = free_port(), threading.Event()
        arguments = {"behaviour": behaviour, "pongs": [] if pongs is None else pongs}

        def listen() -> None:
            servers.append(tornado.web.Application([("/channels", Channel, arguments)]).listen(port))
            listening.set()

        loop.call_soon_threadsafe(listen)
        assert listening.wait(timeout=10), "the stand-in server did not listen in 10 s"
        return f"ws://127.0.0.1:{port}/channels"

    yield url
    for server in servers:
        loop.call_soon_threadsafe(server.stop)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)


def test_a_channel_closed_before_any_reply_is_a_kernel_that_never_answered(channel_url) -> None:
    with pytest.raises(KernelNeverAnswered):
        execute(channel_url("close"), "token", "print('hello')", timeout=10)


def test_a_channel_closed_after_the_kernel_answered_is_not_retried(channel_url) -> None:
    with pytest.raises(websocket.WebSocketConnectionClosedException):
        execute(channel_url("answer"), "token", "print('hello')", timeout=10)


def test_a_channel_that_only_pings_ends_at_the_deadline(channel_url) -> None:
    """The server pings every 0.1 s and the kernel never answers: ``execute`` raises TimeoutError at its 2 s
    deadline (in a thread, so that a read that never returns fails this test instead of holding the run)."""
    pongs: list[bytes] = []
    url, outcome = channel_url("ping", pongs), []

    def run() -> None:
        started = time.monotonic()
        try:
            execute(url, "token", "print('hello')", timeout=2)
        except Exception as error:  # the outcome, whatever it is, is asserted below
            outcome.append((error, time.monotonic() - started))

    reader = threading.Thread(target=run, daemon=True)
    reader.start()
    reader.join(timeout=20)
    assert not reader.is_alive(), "execute was still reading 20 s after its 2 s deadline"
    (error, seconds), = outcome
    assert isinstance(error, TimeoutError) and "no answer from the kernel in 2 s" in str(error), repr(error)
    assert 2 <= seconds < 5, f"execute gave up after {seconds:.1f} s, its deadline was 2 s"
    assert len(pongs) >= 10, f"the client answered {len(pongs)} pings: the server's pings did not reach it"
