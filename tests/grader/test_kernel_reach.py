"""Nothing the student's code can read while graded holds a hidden test or a solution, nor can it send it.

One submission, graded by ``autograder.pipeline.commands.grade`` as any other, carries :mod:`secret_walk`: its
last answer cell walks every file the kernel can open and prints what it found, and its graded
function does the same in the clean re-run, where it reports through the failure message of
the tests that call it. The secrets are every hidden-test line and every solution (as runs of
lines) of every source notebook of the course, handed in as hashes. The probe also lists the
network interfaces it sees and tries to reach a server the test runs on the host's loopback.
"""

import json
import re
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbformat import NotebookNode

from autograder.course.course import Course
from autograder.course.notebooks import grade_id, is_answer_cell, reference_answers, solution_code
from autograder.course.settings import RELEASE_DIRECTORY, REPO_ROOT, SOURCE_DIRECTORY, release_notebook, source_notebook
from autograder.launch.limits import Limits
from autograder.launch.sandbox import bwrap_available
from autograder.pipeline.storage.results import SubmissionResult
from tests.grader import secret_walk
from tests.grader.hostile_class import ASSIGNMENT, hidden_test_blocks, solution, with_answer
from tests.support.course import ThrowawayCourse
from tests.support.grading_pool import grade_on_kept_pool

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not bwrap_available(), reason="needs bubblewrap to hide anything from student code"),
]

STUDENT = "prober"
PROBED = "padding_mask"  # the last answer cell: the hidden tests of the others have run by then
REPORT = re.compile(r"WALK-REPORT (\{[^{}]*\})")
LIMITS = Limits(wall_seconds=240, memory_bytes=3 * 2**30, cell_timeout=60)
SHORTEST_LINE = 12
WINDOW = 3
MIN_FILES = 30  # the grader and helper packages alone hold more: fewer means the walk did not run


def plain_lines(text: str) -> list[str]:
    return [secret_walk._probe_test_line(line) for line in text.splitlines()]


def code_lines(text: str) -> list[str]:
    return [line for line in map(secret_walk._probe_code_line, text.splitlines()) if line]


def windows(lines: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(lines[i : i + size]) for i in range(len(lines) - size + 1)}


def course_secrets(public: list[str]) -> dict[int, set[str]]:
    """Hashes of the course's secrets that no ``public`` text (what students get, the submission) shows.

    Kind 0: hidden-test lines of at least SHORTEST_LINE characters; kind n: runs of n lines of a
    solution (WINDOW lines, or the whole solution when shorter).
    """
    sources = [nbformat.read(path, as_version=4) for path in sorted((REPO_ROOT / SOURCE_DIRECTORY).glob("*/*.ipynb"))]
    shown_lines = {line for text in public for line in plain_lines(text)}
    hidden = {line for notebook in sources for block in hidden_test_blocks(notebook) for line in plain_lines(block)}
    secrets: dict[int, set[str]] = {0: {secret_walk._probe_digest(0, [line]) for line in hidden
                                        if len(line) >= SHORTEST_LINE and line not in shown_lines}}
    shown_runs = {size: {run for text in public for run in windows(code_lines(text), size)} for size in (1, 2, WINDOW)}
    for notebook in sources:
        for cell in filter(is_answer_cell, notebook.cells):
            lines = code_lines(solution_code(cell.source))
            size = min(WINDOW, len(lines))
            for run in windows(lines, size) - shown_runs.get(size, set()):
                if len(" ".join(run)) >= SHORTEST_LINE:
                    secrets.setdefault(size, set()).add(secret_walk._probe_digest(size, list(run)))
    return secrets


def public_texts(*notebooks: NotebookNode) -> list[str]:
    """What every student gets (the release notebooks, the helper package) and the cells of ``notebooks``."""
    release = [nbformat.read(path, as_version=4) for path in sorted((REPO_ROOT / RELEASE_DIRECTORY).glob("*/*.ipynb"))]
    helpers = [path.read_text() for path in sorted((REPO_ROOT / "tfcourse").rglob("*.py"))]
    return [cell.source for notebook in [*release, *notebooks] for cell in notebook.cells] + helpers


def probing_answer(answer: str, secrets: dict[int, set[str]], port: int) -> str:
    """``answer`` (defining PROBED) with the probe: run in the kernel at once, and by PROBED in the clean re-run."""
    return f"""{answer}

{Path(secret_walk.__file__).read_text()}

_PROBE_SECRETS = {secrets!r}
_PROBE_PORT = {port}
_PROBE_REPORT = []
_probe_answer = {PROBED}


def {PROBED}(*args, **kwargs):
    import json, sys
    if "ipykernel" in sys.modules:
        return _probe_answer(*args, **kwargs)
    if not _PROBE_REPORT:
        _PROBE_REPORT.append(json.dumps({{**_probe_walk(_PROBE_SECRETS), **_probe_network(_PROBE_PORT)}}))
    raise RuntimeError("WALK-REPORT " + _PROBE_REPORT[0])


import json as _probe_json

print("WALK-REPORT " + _probe_json.dumps({{**_probe_walk(_PROBE_SECRETS), **_probe_network(_PROBE_PORT)}}))
"""


def submission(port: int) -> NotebookNode:
    filled = solution()
    secrets = course_secrets([*public_texts(filled), Path(secret_walk.__file__).read_text()])
    answer = reference_answers(nbformat.read(source_notebook(ASSIGNMENT), as_version=4))[PROBED]
    return with_answer(filled, PROBED, probing_answer(answer, secrets, port))


class LoopbackServer:
    """A TCP server on the host's 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()


@dataclass
class Graded:
    course: Course
    result: SubmissionResult
    server: LoopbackServer


@pytest.fixture(scope="module")
def graded(throwaway_course: ThrowawayCourse) -> Graded:
    course = throwaway_course(ASSIGNMENT, name="reach", seeded=True)
    folder = course.grading.submitted(STUDENT, ASSIGNMENT)
    folder.mkdir(parents=True)
    server = LoopbackServer()
    nbformat.write(submission(server.port), folder / f"{ASSIGNMENT}.ipynb")
    [result] = grade_on_kept_pool(course, jobs=1, limits=LIMITS, progress=False)
    server.socket.close()
    return Graded(course, result, server)


def parse_report(text: str) -> dict:
    found = REPORT.findall(text)
    assert found, f"no walk report in {text[:500]!r}"
    return json.loads(found[0])


def check_report(report: dict, where: str) -> None:
    assert report["files"] >= MIN_FILES and report["cwd_walked"] and report["complete"], f"{where}: {report}"
    assert report["system"] and not report["writable_system"], f"{where}: unread system trees must be read-only"
    assert report["hit_count"] == 0, f"{where}: files readable by student code hold secrets: {report}"


def check_network(report: dict, where: str) -> None:
    assert report["interfaces"] == ["lo"], f"{where}: student code sees network interfaces {report['interfaces']}"
    assert not report["reached"], f"{where}: student code reached a server on the host's loopback"
    assert report["net_error"], f"{where}: {report}"


def kernel_report(graded: Graded) -> dict:
    kept = graded.course.grading.autograded(STUDENT, ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    cell = next(cell for cell in nbformat.read(kept, as_version=4).cells if grade_id(cell) == PROBED)
    return parse_report("".join(output.get("text", "") for output in cell.outputs))


def clean_report(graded: Graded) -> dict:
    messages = [test.message for test in graded.result.tests if test.grade_id.startswith(PROBED) and test.message]
    assert messages, f"the clean re-run did not report: {graded.result}"
    return parse_report(messages[0])


def test_the_kernel_can_read_no_secret(graded: Graded) -> None:
    check_report(kernel_report(graded), "kernel run")
    assert graded.result.score > 0, graded.result  # the probe's answers are right: the kernel run passed the tests


def test_the_clean_rerun_can_read_no_secret(graded: Graded) -> None:
    check_report(clean_report(graded), "clean re-run")


def test_student_code_has_no_network_in_either_run(graded: Graded) -> None:
    check_network(kernel_report(graded), "kernel run")
    check_network(clean_report(graded), "clean re-run")
    assert graded.server.accepted == 0, "the host's loopback server was reached"


def test_the_network_probe_reaches_a_server_it_can_see() -> None:
    """Outside the sandbox the same probe reaches the same kind of server: its 'no' above means something."""
    server = LoopbackServer()
    try:
        report = secret_walk._probe_network(server.port)
    finally:
        server.socket.close()
    assert report["reached"] and not report["net_error"], report


def test_the_probe_finds_a_planted_secret(tmp_path: Path) -> None:
    """The walker recognises a hidden-test line and a solution, raw and quoted in a notebook."""
    source = nbformat.read(source_notebook(ASSIGNMENT), as_version=4)
    line = next(line for block in hidden_test_blocks(source) for line in block.splitlines() if len(line) > 20)
    code = next(solution_code(cell.source) for cell in source.cells if is_answer_cell(cell))
    (tmp_path / "raw.txt").write_text(f"x\n  {line}  \ny\n")
    (tmp_path / "quoted.json").write_text(json.dumps({"plan": ["a", code, "b"]}))
    public = nbformat.read(release_notebook(ASSIGNMENT), as_version=4)
    secrets = course_secrets(public_texts())
    (tmp_path / "public.txt").write_text("\n".join(cell.source for cell in public.cells))
    for name, holds in [("raw.txt", True), ("quoted.json", True), ("public.txt", False)]:
        assert secret_walk._probe_holds_secret((tmp_path / name).read_text(), secrets) is holds, name
