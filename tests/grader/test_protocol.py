"""The sandbox boundary: typed messages with one serialisation, and code inside that imports nothing of the grader's."""

import ast
import sys
from pathlib import Path

import pytest

from autograder.isolated import protocol
from autograder.isolated.protocol import (
    AutogradeRequest,
    ChildJob,
    CleanRerunRequest,
    JobReply,
    KernelRequest,
    PlanCell,
    ProtocolError,
    SocketJob,
    StubLaunch,
    decode,
    encode,
)

ISOLATED = Path(protocol.__file__).parent
# Started without site-packages, or before anything but their own modules is loaded.
STANDARD_LIBRARY_ONLY = {"protocol.py": set(), "kernelstub.py": {"autograder.isolated.protocol"},
                         "zygote_server.py": {"psutil", "autograder.isolated.protocol"}}


def imported_modules(path: Path, at_import: bool = False) -> set[str]:
    """Every module a file imports; with ``at_import``, only those loaded when the file is (not in a function)."""
    tree = ast.parse(path.read_text())
    nodes = ast.walk(tree)
    if at_import:
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        inside = {id(inner) for function in functions for inner in ast.walk(function)}
        nodes = (n for n in ast.walk(tree) if id(n) not in inside)
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def test_code_inside_the_sandbox_imports_nothing_from_the_pipeline_or_the_launcher() -> None:
    for path in ISOLATED.glob("*.py"):
        wrong = {m for m in imported_modules(path) if m.startswith(("autograder.pipeline", "autograder.launch"))}
        assert not wrong, f"{path.name} imports {sorted(wrong)}: the sandbox side must not depend on the grader's"


@pytest.mark.parametrize("name", sorted(STANDARD_LIBRARY_ONLY))
def test_the_zygote_the_stub_and_the_protocol_need_only_the_standard_library(name: str) -> None:
    # Imports inside a function (a request's run(), start_kernel) load in the job's child, from its zygote's preloads.
    allowed = STANDARD_LIBRARY_ONLY[name]
    for module in imported_modules(ISOLATED / name, at_import=True):
        top = module.split(".")[0]
        ok = top in sys.stdlib_module_names or module in allowed or module.rsplit(".", 1)[0] in allowed
        assert ok, f"{name} imports {module} when it is loaded"


def test_every_message_survives_a_round_trip() -> None:
    plan = (PlanCell("setup", "", "import torch"), PlanCell("test", "sdpa_values", "assert True", limit=7.5))
    request = AutogradeRequest("/c", "/c/gb.db", "01_attention", "ann", 120, {"sdpa": 5.2}, "/s.sock", "t", "/k")
    messages = [
        request,
        ChildJob(CleanRerunRequest(plan, "/r.json", 60), cwd="/w", log="/w/log", env={"A": "1"}, wall=9.5,
                 memory=2**32, file_size=-1, threads=1),
        SocketJob("token", ChildJob(KernelRequest("/k.json"), "/w", "/dev/null", {}, 1.0, -1, -1)),
        JobReply(124, True, 3.25),
        StubLaunch("/s.sock", "t", "/k.json", "/w", "/w/kernel.log"),
    ]
    for message in messages:
        line = encode(message)
        assert line.endswith("\n") and line.count("\n") == 1
        assert decode(line, type(message)) == message


@pytest.mark.parametrize(
    "line",
    ['{"__message__": "JobReply", "fields": {"returncode": 0}}',  # a field missing
     '{"__message__": "Exec", "fields": {"code": "import os"}}',  # not a message of the protocol
     '{"__message__": "Ready", "fields": {}}',  # another message than the one expected
     "not json"],
)
def test_anything_but_the_expected_message_is_refused(line: str) -> None:
    with pytest.raises(ProtocolError):
        decode(line, JobReply)
