"""A class of hostile and honest submissions for the grader's tests, and how to hand them in.

Every submission is built from the course's own notebooks with nbformat and handed in to a
throw-away course (the ``throwaway_course`` fixture), so the tests never touch the repository's
grading folder.
"""

import base64
import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from autograder.course.course import Course
from autograder.course.notebooks import (
    HIDDEN_TESTS,
    fill_answers,
    grade_id,
    is_graded_test_cell,
    nbgrader_meta,
    reference_answers,
)
from autograder.course.paths import GRADEBOOK
from autograder.course.settings import release_notebook, source_notebook
from autograder.launch.limits import Limits
from autograder.pipeline.storage.results import SubmissionResult

ASSIGNMENT = "01_attention"
# Small limits keep the suite short: the solution needs about 10 s in the kernel, its slowest
# cell (the imports) up to 8 s when two kernels start at once.
LIMITS = Limits(wall_seconds=75, memory_bytes=3 * 2**30, cell_timeout=20)


def attention_answer(scale: str, first: str = "") -> str:
    """An answer for ``sdpa``: ``first`` lines run on every call, ``scale`` divides the scores (or not)."""
    return f"""
def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
{first}    scores = query @ key.transpose(-2, -1){scale}
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights
"""


NO_SCALING = attention_answer(scale="")


def solution() -> NotebookNode:
    """What a good student hands in: the release notebook with the reference answers filled in."""
    return fill_answers(release(), reference_answers(nbformat.read(source_notebook(ASSIGNMENT), as_version=4)))


def points_per_test() -> dict[str, float]:
    """Points of every graded test cell of the notebook, by grade id."""
    source = nbformat.read(source_notebook(ASSIGNMENT), as_version=4)
    return {grade_id(cell): nbgrader_meta(cell)["points"] for cell in source.cells if is_graded_test_cell(cell)}


def release() -> NotebookNode:
    return nbformat.read(release_notebook(ASSIGNMENT), as_version=4)


def cell_index(notebook: NotebookNode, name: str) -> int:
    return next(i for i, cell in enumerate(notebook.cells) if grade_id(cell) == name)


def with_answer(notebook: NotebookNode, name: str, source: str) -> NotebookNode:
    notebook.cells[cell_index(notebook, name)].source = source
    return notebook


def with_cell_after(notebook: NotebookNode, name: str, source: str) -> NotebookNode:
    cell = new_code_cell(source)
    del cell["id"]  # the course's notebooks are format 4.4, which has no cell ids
    notebook.cells.insert(cell_index(notebook, name) + 1, cell)
    return notebook


@dataclass(frozen=True)
class Case:
    """A student of the class: how their notebook is made, and what the grader must make of it."""

    student: str
    build: Callable[[Course], NotebookNode | str | None]  # str: raw file text; None: nothing submitted


def deleted_test(course: Course) -> NotebookNode:
    notebook = with_answer(solution(), "sdpa", NO_SCALING)
    del notebook.cells[cell_index(notebook, "sdpa_values")]
    return notebook


def edited_test(course: Course) -> NotebookNode:
    notebook = with_answer(solution(), "sdpa", NO_SCALING)
    notebook.cells[cell_index(notebook, "sdpa_values")].source = "pass"
    return notebook


def duplicate_ids(course: Course) -> NotebookNode:
    notebook = solution()
    index = cell_index(notebook, "causal_mask")
    notebook.cells.insert(index + 1, copy.deepcopy(notebook.cells[index]))  # a copy-pasted answer cell
    return notebook


def allclose_patched(course: Course) -> NotebookNode:
    wrong = "def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):\n"
    wrong += "    return torch.zeros_like(value[..., :1, :]).expand(*query.shape[:-1], value.shape[-1]), None\n"
    patch = (
        "import tfcourse.checks\n"
        "def _always(*args, **kwargs):\n    return True\n"
        "tfcourse.checks.check_close = _always\n"
        "check_close = check_equal = check_shape = check_dtype = check_finite = check_near = _always\n"
        "torch.allclose = _always\n"
    )
    return with_answer(solution(), "sdpa", wrong + patch)


def assert_stripper(course: Course) -> NotebookNode:
    wrong = "def causal_mask(size, device=None):\n    return torch.ones(size, size, dtype=torch.bool, device=device)\n"
    strip = (
        "def _drop(lines):\n"
        "    return [line for line in lines if 'assert' not in line and 'check_' not in line]\n"
        "get_ipython().input_transformers_cleanup.append(_drop)\n"
    )
    return with_answer(solution(), "causal_mask", wrong + strip)


def reads_hidden(course: Course) -> NotebookNode:
    # Looks for the instructor's files where a shared grading machine keeps them.
    candidates = [course.source_notebook(ASSIGNMENT), Course.default().source_notebook(ASSIGNMENT)]
    cheat = f"""
def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    import json, math
    for path in {[str(p) for p in candidates]!r}:
        try:
            cells = json.load(open(path))["cells"]
        except OSError:
            continue
        source = next("".join(c["source"]) for c in cells if "def scaled_dot_product_attention" in "".join(c["source"]))
        namespace = dict(globals())
        exec(source, namespace)
        return namespace["scaled_dot_product_attention"](query, key, value, mask, dropout)
    raise NotImplementedError("no solution found on disk")
"""
    return with_answer(solution(), "sdpa", cheat)


def vandal_targets(course: Course) -> list[str]:
    """The files a vandal would like to overwrite: the real gradebook, a classmate's work, the solutions."""
    targets = [
        course.grading.gradebook,
        course.grading.submitted("good", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb",
        course.source_notebook(ASSIGNMENT),
        Path("../../..", GRADEBOOK),  # the course copy's gradebook, seen from the kernel's folder
    ]
    return [str(target) for target in targets]


def writes_outside(course: Course) -> NotebookNode:
    vandal = f"""
for target in {vandal_targets(course)!r}:
    try:
        with open(target, "w") as handle:
            handle.write("overwritten by a student")
        print("wrote", target)
    except OSError as error:
        print("could not write", target, error)
"""
    return with_cell_after(solution(), "padding_mask", vandal)


def writes_from_function(course: Course) -> NotebookNode:
    """A correct answer that also tries to overwrite files each time the tests call it (clean re-run too)."""
    vandal = f"""    for target in {vandal_targets(course)!r}:
        try:
            with open(target, "w") as handle:
                handle.write("overwritten by a student")
        except OSError:
            pass
"""
    answer = attention_answer(scale=" / math.sqrt(query.size(-1))", first=vandal)
    return with_answer(solution(), "sdpa", answer)


def links_notebook_elsewhere(course: Course) -> NotebookNode:
    """Tries to swap its own notebook for a link to a classmate's, which nbgrader's final write would follow."""
    victim = course.grading.submitted("good", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    swap = f"import os\nos.remove({ASSIGNMENT + '.ipynb'!r})\nos.symlink({str(victim)!r}, {ASSIGNMENT + '.ipynb'!r})\n"
    return with_cell_after(solution(), "padding_mask", swap)


def hidden_test_blocks(notebook: NotebookNode) -> list[str]:
    """The text between the hidden-test markers of every cell of a source notebook."""
    return [block for cell in notebook.cells for block in HIDDEN_TESTS.findall(cell.source)]


def prints_hidden(course: Course) -> NotebookNode:
    """A correct answer whose cells print hidden tests three ways while graded.

    The answer cell prints the hidden tests of its own working-folder notebook (the autograded
    copy, hidden tests put back in: raw JSON and as text) and a hidden test the student got
    hold of (base64, so the submission itself does not quote it); the graded function prints
    the source of each test cell that calls it.
    """
    copied = base64.b64encode(hidden_test_blocks(nbformat.read(course.source_notebook(ASSIGNMENT), 4))[0].encode())
    answer = attention_answer(
        scale=" / math.sqrt(query.size(-1))",
        first="""    try:
        caller = sys._getframe(1)
        if caller.f_code.co_filename not in SHOWN:
            SHOWN.add(caller.f_code.co_filename)
            print("".join(inspect.getsourcelines(caller)[0]))
    except Exception:
        pass
""",
    )
    leak = f"""import base64, inspect, json, sys
SHOWN = set()
try:
    with open({ASSIGNMENT + ".ipynb"!r}) as handle:
        text = handle.read()
    print(text[text.index("### BEGIN HIDDEN TESTS") :][:5000])
    for cell in json.loads(text)["cells"]:
        if "### BEGIN HIDDEN TESTS" in "".join(cell["source"]):
            print("".join(cell["source"]))
except (OSError, ValueError) as error:
    print("could not read my notebook:", error)
print(base64.b64decode({copied!r}).decode())
"""
    return with_answer(solution(), "sdpa", leak + answer)


CASES = [
    Case("good", lambda course: solution()),
    Case("blank", lambda course: release()),
    Case("nothing_submitted", lambda course: None),
    Case("invalid_json", lambda course: '{"cells": [ this is not JSON'),
    Case("deleted_test", deleted_test),
    Case("edited_test", edited_test),
    Case("duplicate_ids", duplicate_ids),
    Case("loop_top_level", lambda course: with_cell_after(solution(), "padding_mask", "while True:\n    pass")),
    Case(
        "memory_hog",
        lambda course: with_answer(
            solution(),
            "sdpa",
            "def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):\n"
            "    hog = [bytearray(2**20) for _ in range(64 * 1024)]  # 64 GiB\n"
            "    return hog, hog\n",
        ),
    ),
    Case("allclose_patched", allclose_patched),
    Case("assert_stripper", assert_stripper),
    Case("reads_hidden", reads_hidden),
    Case("prints_hidden", prints_hidden),
    Case("writes_outside", writes_outside),
    Case("writes_from_function", writes_from_function),
    Case("links_notebook_elsewhere", links_notebook_elsewhere),
    Case("os_exit", lambda course: with_cell_after(solution(), "padding_mask", "import os\nos._exit(3)")),
    Case(
        "huge_output",
        lambda course: with_cell_after(solution(), "padding_mask", "for i in range(20):\n    print(str(i) * 500_000)"),
    ),
]


@dataclass
class GradedClass:
    course: Course
    results: dict[str, SubmissionResult]
    good_submission_bytes: bytes
    solution_bytes: bytes


def submit(course: Course, case: Case) -> None:
    content = case.build(course)
    folder = course.grading.submitted(case.student, ASSIGNMENT)
    folder.mkdir(parents=True)
    if content is None:
        (folder / "notes.txt").write_text("forgot the notebook")
    elif isinstance(content, str):
        (folder / f"{ASSIGNMENT}.ipynb").write_text(content)
    else:
        nbformat.write(content, folder / f"{ASSIGNMENT}.ipynb")
