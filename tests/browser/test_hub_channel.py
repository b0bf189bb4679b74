"""The hub tests' kernel channel (``tests/browser/hub.py:execute``) against a stand-in server.

A channel the server closes before any reply to the request is ``KernelNeverAnswered`` (the code
never ran, and ``Hub.run_as`` may run it once more in a fresh kernel); one closed after the kernel
answered is an error as it was, so code that started is never run twice.
"""

import asyncio
import json
import threading
from collections.abc import Callable, Iterator

import pytest
import tornado.web
import tornado.websocket
import websocket

from tests.browser.hub import KernelNeverAnswered, execute
from tests.browser.lab import free_port


class Channel(tornado.websocket.WebSocketHandler):
    """Closes the channel at once, or after one stream message in reply to the request (``answer``)."""

    def initialize(self, answer: bool) -> None:
        self.answer = answer

    def on_message(self, message: str | bytes) -> None:
        request = json.loads(message)
        if self.answer:
            reply = {"header": {"msg_type": "stream"}, "parent_header": request["header"],
                     "content": {"name": "stdout", "text": "started\n"}}  # fmt: skip
            self.write_message(json.dumps(reply))
        self.close()


@pytest.fixture
def channel_url() -> Iterator[Callable[[bool], str]]:
    loop, started, servers = asyncio.new_event_loop(), threading.Event(), []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait()

    def url(answer: bool) -> str:
        port, listening = free_port(), threading.Event()

        def listen() -> None:
            servers.append(tornado.web.Application([("/channels", Channel, {"answer": answer})]).listen(port))
            listening.set()

        loop.call_soon_threadsafe(listen)
        listening.wait()
        return f"ws://127.0.0.1:{port}/channels"

    yield url
    for server in servers:
        loop.call_soon_threadsafe(server.stop)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)


def test_a_channel_closed_before_any_reply_is_a_kernel_that_never_answered(channel_url) -> None:
    with pytest.raises(KernelNeverAnswered):
        execute(channel_url(False), "token", "print('hello')", timeout=10)


def test_a_channel_closed_after_the_kernel_answered_is_not_retried(channel_url) -> None:
    with pytest.raises(websocket.WebSocketConnectionClosedException):
        execute(channel_url(True), "token", "print('hello')", timeout=10)
