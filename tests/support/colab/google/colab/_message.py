"""A stand-in for colabtools' ``google/colab/_message.py`` (googlecolab/colabtools), put on the path of a kernel
that a test starts the way Colab starts one.

There, ``blocking_request(request_type, request='', timeout_sec=5, parent=None)`` sends a ``colab_request`` to the
frontend and returns the ``data`` of the frontend's ``colab_reply``: for ``get_ipynb``, the open notebook as
``{"ipynb": notebook}`` (colabtools reads it so itself: ``nb = _message.blocking_request('get_ipynb')`` then
``nb['ipynb']``, in ``google/colab/runtime.py`` of its branch test_752405058); None when no reply came within
``timeout_sec``; and it raises ``MessageError`` when the reply carries an ``error``. Here the frontend answers
``get_ipynb`` alone, its reply is the JSON file that ``COLAB_STANDIN_REPLY`` names, and no file is no reply (said
at once: nothing waits).
"""

import json
import os
from pathlib import Path


class MessageError(Exception):
    """colabtools' error for a reply that carries an ``error``."""


def blocking_request(request_type: str, request: object = "", timeout_sec: float | None = 5,
                     parent: object = None) -> object:
    path = Path(os.environ["COLAB_STANDIN_REPLY"])
    if request_type != "get_ipynb" or not path.is_file():
        return None
    reply = json.loads(path.read_text(encoding="utf-8"))
    if "error" in reply:
        raise MessageError(reply["error"])
    return reply.get("data")
