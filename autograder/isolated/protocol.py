"""Every message that crosses into the sandbox, and their one serialisation.

The grader (:mod:`autograder.launch.zygote`) sends a zygote a :class:`ChildJob` per line; the
zygote (:mod:`autograder.isolated.zygote_server`) answers :class:`Ready` once, then a
:class:`JobReply` per job. A kernel stub (:mod:`autograder.isolated.kernelstub`) is started with
a :class:`StubLaunch`, sends the kernel zygote a :class:`SocketJob` and relays signals as
:class:`RelaySignal` lines. What a child runs is one of the requests below; each names the code
it runs with a real import in its :meth:`run`, so a rename fails when the module is imported, not
inside a sandboxed child.

:func:`encode` writes any of these as one line of JSON; :func:`decode` reads it back and
checks that it is the message expected. Standard library only: the zygote server and the kernel
stub, which starts without site-packages, import this module.
"""

import dataclasses
import json
import runpy
from dataclasses import dataclass
from typing import TypeVar


class ProtocolError(ValueError):
    """A line that is not the message expected (malformed, unknown, or of another kind)."""


@dataclass(frozen=True)
class AutogradeRequest:
    """nbgrader's autograde of one student, in a course copy at ``course`` with its own gradebook.

    A cell stops at its limit in ``cell_limits`` (by cell key), or after ``cell_timeout`` seconds.
    Kernels come from the zygote listening on ``kernel_socket`` (answering those who know
    ``kernel_token``) and run in ``kernel_folder``/work.
    """

    course: str
    gradebook: str
    assignment: str
    student: str
    cell_timeout: float
    cell_limits: dict[str, float]
    kernel_socket: str
    kernel_token: str
    kernel_folder: str
    edition: str = "en"  # the language the kernels print in (tfcourse.language): the submission's edition

    def run(self) -> int:
        from autograder.isolated import autograde_child  # nbgrader: loaded in the zygote only

        return autograde_child.autograde(self)


@dataclass(frozen=True)
class PlanCell:
    """One cell of the clean re-run's plan: ``kind`` is "setup", "answer", "added" or "test"."""

    kind: str
    grade_id: str
    source: str
    limit: float | None = None  # seconds; None: the request's cell timeout


@dataclass(frozen=True)
class CleanRerunRequest:
    """Run ``plan`` in a fresh process; write each test's outcome to ``results_path`` as it is known."""

    plan: tuple[PlanCell, ...]
    results_path: str
    cell_timeout: float
    edition: str = "en"  # the language the tests' messages are in (tfcourse.language): the submission's edition

    def run(self) -> int:
        from autograder.isolated import run_plan

        run_plan.run_plan(self)
        return 0


@dataclass(frozen=True)
class KernelRequest:
    """An IPython kernel on the channels of ``connection_file``: the only job a zygote takes on its socket."""

    connection_file: str

    def run(self) -> int:
        from autograder.isolated import kernelstub

        kernelstub.start_kernel(self.connection_file)
        return 0


@dataclass(frozen=True)
class ScriptRequest:
    """Run the Python file at ``path`` (how the grader's tests try the zygote's limits)."""

    path: str

    def run(self) -> int:
        runpy.run_path(self.path, run_name="__main__")
        return 0


Request = AutogradeRequest | CleanRerunRequest | KernelRequest | ScriptRequest


@dataclass(frozen=True)
class ChildJob:
    """One job for a zygote: the request, and the folder, environment and limits of the child that runs it.

    ``memory`` and ``file_size`` are bytes (``RLIMIT_AS``, ``RLIMIT_FSIZE``), ``wall`` seconds;
    ``threads`` caps torch's thread pool when the zygote preloaded torch (None: the default).
    """

    request: Request
    cwd: str
    log: str
    env: dict[str, str]
    wall: float
    memory: int
    file_size: int
    threads: int | None = None


@dataclass(frozen=True)
class SocketJob:
    """A job sent on a zygote's socket, with the token that zygote answers to."""

    token: str
    job: ChildJob


@dataclass(frozen=True)
class Ready:
    """The zygote has loaded its modules and takes jobs."""


@dataclass(frozen=True)
class JobReply:
    """How a job ended: its exit code (124 at the wall limit, 128 + N for signal N), and after how long."""

    returncode: int
    timed_out: bool
    seconds: float
    error: str = ""  # a job the zygote could not start (malformed, refused)


@dataclass(frozen=True)
class StubLaunch:
    """The kernel stub's one argument: the kernel zygote to ask, and the kernel to ask for."""

    zygote_socket: str
    token: str
    connection_file: str
    working_folder: str
    log: str


@dataclass(frozen=True)
class RelaySignal:
    """A signal for the job, sent by its requester (an interrupt at a cell's limit)."""

    signum: int


MESSAGES = {
    cls.__name__: cls
    for cls in (AutogradeRequest, PlanCell, CleanRerunRequest, KernelRequest, ScriptRequest, ChildJob, SocketJob,
                Ready, JobReply, StubLaunch, RelaySignal)
}
TAG = "__message__"
Message = TypeVar("Message")


def _to_data(value: object) -> object:
    if dataclasses.is_dataclass(value) and type(value).__name__ in MESSAGES:
        fields = {f.name: _to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {TAG: type(value).__name__, "fields": fields}
    if isinstance(value, list | tuple):
        return [_to_data(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _to_data(item) for key, item in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise ProtocolError(f"cannot send a {type(value).__name__}")


def _from_data(data: object) -> object:
    if isinstance(data, dict) and set(data) == {TAG, "fields"}:
        cls = MESSAGES.get(data[TAG])
        if cls is None or not isinstance(data["fields"], dict):
            raise ProtocolError(f"unknown message {data[TAG]!r}")
        try:
            return cls(**{name: _from_data(item) for name, item in data["fields"].items()})
        except TypeError as error:
            raise ProtocolError(f"{data[TAG]}: {error}") from None
    if isinstance(data, list):
        return tuple(_from_data(item) for item in data)
    if isinstance(data, dict):
        return {key: _from_data(item) for key, item in data.items()}
    return data


def encode(message: object) -> str:
    """``message`` as one line of JSON, newline included."""
    return json.dumps(_to_data(message)) + "\n"


def decode(line: str, expected: type[Message]) -> Message:
    """The message of type ``expected`` on ``line``; :class:`ProtocolError` for anything else."""
    try:
        data = json.loads(line)
    except ValueError as error:
        raise ProtocolError(f"not JSON: {error}") from None
    message = _from_data(data)
    if not isinstance(message, expected):
        raise ProtocolError(f"expected {expected.__name__}, got {type(message).__name__}")
    return message
