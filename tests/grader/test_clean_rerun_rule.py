"""What the clean re-run keeps of an answer (autograder/pipeline/job/kept_code.py): all an honest answer needs, none
of the state the student's kernel held, and a missing name explained to the student.

The honest answers of every exercise (tests/grader/honest_definitions.py) are graded in-process
(tests/support/inprocess.py) twice on their exercise's tests: as handed in, as the kernel runs them, and as the
clean re-run's plan (:func:`autograder.pipeline.job.clean_rerun.clean_plan`) keeps them. One answer of the issue
that made this rule (06's extra credit with a module constant from a call) goes through the real clean re-run.
"""

import ast
from pathlib import Path

import nbformat
import pytest

from autograder.course.course import Course
from autograder.course.notebook_code import notebook_bindings
from autograder.course.notebooks import EDITION_KEY, fill_answers, reference_answers
from autograder.course.settings import assignment_ids, release_notebook, source_notebook
from autograder.launch.limits import Limits, Outcome
from autograder.launch.zygote import Zygote
from autograder.pipeline.commands.feedback import Secrets, summary_cell
from autograder.pipeline.feedback_text import words
from autograder.pipeline.job import clean_rerun
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.kept_code import explain, extract_definitions
from autograder.pipeline.job.kernel_run import KernelRun
from autograder.pipeline.job.verdict import award
from autograder.pipeline.storage.results import Status, SubmissionResult
from autograder.pipeline.storage.results import TestResult as CellResult  # (a Test* name would be collected by pytest)
from testbed.notebooks import read
from testbed.variants.spec import Variant
from tests.grader.honest_definitions import code_answers, honest_variants
from tests.support.harness import inprocess_notebook

CASES = [(a, v) for a in assignment_ids() for v in honest_variants(code_answers(read(source_notebook(a))))]


def student_notebook(assignment: str, answers: dict[str, str], language: str = "en") -> nbformat.NotebookNode:
    """The release with the reference answers, ``answers`` in their cells instead."""
    source = read(source_notebook(assignment))
    release = read(release_notebook(assignment))
    release.metadata[EDITION_KEY] = {"edition": language}
    return fill_answers(release, {**reference_answers(source), **answers})


def kept_answer(assignment: str, cell: str, answer: str) -> str:
    """What the clean re-run's plan runs in place of ``answer``."""
    plan = clean_rerun.clean_plan(student_notebook(assignment, {cell: answer}), read(source_notebook(assignment)))
    return next(c.source for c in plan.cells if c.kind == "answer" and c.grade_id == cell)


def lost(outcomes: dict, cell: str) -> dict[str, str]:
    return {name: o.error or o.stderr for name, o in outcomes.items() if name.startswith(cell) and not o.passed}


@pytest.mark.slow  # 37 answers (each with every kind) graded twice, notebooks' own runs included
@pytest.mark.parametrize(("notebook", "honest"), CASES, ids=[f"{a}:{v.id}" for a, v in CASES])
def test_an_honest_answer_keeps_every_point_in_the_clean_rerun(notebook: str, honest: Variant) -> None:
    answer = honest.apply("")
    runner = inprocess_notebook(notebook)
    in_kernel = lost(runner.grade({honest.cell: answer}, tests_of=honest.cell), honest.cell)
    assert not in_kernel, f"{honest.id} is not a correct answer: it loses points in the kernel too: {in_kernel}"
    kept = kept_answer(notebook, honest.cell, answer)
    clean = lost(runner.grade({honest.cell: kept}, tests_of=honest.cell), honest.cell)
    assert not clean, f"{honest.id} loses points in the clean re-run, which ran:\n{kept}\n{clean}"


PROTECTED = {"torch": "import torch", "math": "import math", "check_close": "", "model": ""}


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("_W = torch.tensor(SCRATCH)", "reads a variable only the kernel held"),
        ("_W = [SCRATCH[i] for i in range(3)]", "reads it in a comprehension"),
        ("_W = model.weight", "reads a notebook variable of a cell below"),
        ("_ = setattr(torch, 'allclose', max)", "calls setattr"),
        ("_ = getattr(torch, '__dict__')", "reaches a private attribute by name"),
        ("_T = vars(torch)", "reaches the module's namespace"),
        ("_T = torch.__dict__", "reads a private attribute"),
        ("_L = __loader__", "reads a dunder builtin"),
        ("_T = (check_close := max)", "rebinds inside a walrus"),
        ("import sys\n_M = sys.modules", "touches sys.modules (the tamper scan's finding)"),
        ("check_close = max", "rebinds a name of the notebook"),
        ("len = max", "rebinds a builtin"),
        ("torch.allclose = max", "patches an attribute"),
        ("for i in range(3):\n    _TABLE[i] = i", "fills a table in a loop"),
        ("if True:\n    torch.allclose = max", "hides a patch in an if"),
        ("try:\n    _W = SCRATCH\nexcept NameError:\n    _W = 0", "reads kernel state in a try"),
    ],
)
def test_what_the_clean_rerun_leaves_out(line: str, why: str) -> None:
    kept = extract_definitions(f"{line}\nKEEP = math.log(2.0)", PROTECTED, {"torch", "math", "check_close"})
    assert kept.code.splitlines()[-1] == "KEEP = math.log(2.0)", (why, kept.code)
    assert all(kept.startswith(("import ", "KEEP =")) for kept in kept.code.splitlines()), (why, kept.code)


def test_what_the_clean_rerun_keeps() -> None:
    code = """
import torch
import numpy as np
from math import log
try:
    from functools import cache
except ImportError:
    cache = None
_GATE_BIAS = log(3.0)
_ONE: torch.Tensor = torch.tensor(1.0, dtype=torch.float32)
_SQUARES = {n: n * n for n in range(4)}
_A, _B = np.sqrt(4.0), len(_SQUARES)
_FN = lambda x: x * _GATE_BIAS
_D = d_model // 2
def answer(x):
    import math
    return x * math.sqrt(_D)
class Layer:
    SCALE = math.sqrt(2.0)
"""
    kept = extract_definitions(code, PROTECTED, {"torch", "math", "d_model"})
    assert ast.dump(ast.parse(kept.code)) == ast.dump(ast.parse(code)), kept.code
    assert kept.omissions == []


def test_a_missing_name_is_explained_in_the_students_words() -> None:
    kept = extract_definitions(
        "_W = torch.tensor(SCRATCH)\nprint('hi')\n_T = {}\nfor _k in range(3):\n    _T[_k] = _k\n",
        PROTECTED, {"torch"}, "classifier",
    )
    error = "NameError: name '_W' is not defined"
    assert explain(error, kept.omissions, [], "en") == words("en")["clean_missing_state"].format(
        name="_W", where="line 1 of cell classifier", lacking="`SCRATCH`")
    in_chinese = explain(error, kept.omissions, [], "zh")
    assert "`_W`" in in_chinese and "单元格 classifier 的第 1 行" in in_chinese, in_chinese
    assert explain("NameError: name '_k' is not defined", kept.omissions, [], "en") == words("en")[
        "clean_missing_code"].format(name="_k", where="line 4 of cell classifier")
    assert explain("NameError: name 'helper' is not defined", kept.omissions, [], "en") == words("en")[
        "clean_missing_nowhere"].format(name="helper")
    assert explain("AssertionError: weights", kept.omissions, [], "en") == "AssertionError: weights"


GATED_SUM = """
_GATE_BIAS = math.log(3.0)  # every gate starts at sigmoid(log 3) = 0.75


def make_pooling(d_model: int) -> nn.Module:
    class GatedSum(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gate = nn.Linear(d_model, 1)
            nn.init.constant_(self.gate.bias, _GATE_BIAS)

        def forward(self, hidden: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
            gates = torch.sigmoid(self.gate(hidden))
            return (gates * hidden).masked_fill(~keep.unsqueeze(-1), 0.0).sum(dim=1)

    return GatedSum()
"""
AG_NEWS, POOLING = "06_ag_news_classifier", "extra_credit_pooling"


@pytest.fixture
def zygote() -> Zygote:
    warm = Zygote()
    yield warm
    warm.close()


@pytest.mark.slow  # 29 s: notebook 06 up to its last test
def test_the_issues_extra_credit_keeps_its_points_in_the_real_clean_rerun(zygote: Zygote) -> None:
    # Issue 51: a gate bias set from a call at module level, used in __init__, lost all 4 points.
    student = student_notebook(AG_NEWS, {POOLING: GATED_SUM})
    limits = Limits(wall_seconds=600, memory_bytes=4 * 2**30, cell_timeout=300)
    results = clean_rerun.clean_rerun(student, read(source_notebook(AG_NEWS)), limits, zygote)
    own = {name: r for name, r in results.items() if name.startswith(POOLING)}
    assert own and all(r["passed"] for r in own.values()), own


def test_carried_state_still_fails_and_is_explained_in_the_real_clean_rerun(zygote: Zygote) -> None:
    # 01's attention scaled by a constant computed from a variable only the kernel had (a deleted cell's), and
    # a mask whose cell first calls a helper that reads such a variable: the kernel had them, the clean re-run not.
    answers = reference_answers(read(source_notebook("01_attention")))
    carried = "_SCALE = 1 / math.sqrt(D_K_SEEN)\n" + answers["sdpa"].replace("math.sqrt(d_k)", "(1 / _SCALE)")
    assert "(1 / _SCALE)" in carried
    stopped = "def _offset():\n    return OFFSET_SEEN\n\n\n_OFFSET = _offset()\n" + answers["causal_mask"]
    student = student_notebook("01_attention", {"sdpa": carried, "causal_mask": stopped}, language="zh")
    limits = Limits(wall_seconds=120, memory_bytes=3 * 2**30, cell_timeout=60)
    results = clean_rerun.clean_rerun(student, read(source_notebook("01_attention")), limits, zygote)
    values, mask = results["sdpa_values"], results["causal_mask_values"]
    assert not values["passed"] and "NameError: name '_SCALE' is not defined" in values["message"], values
    say = words("zh")
    assert values["explained"] == say["clean_missing_state"].format(
        name="_SCALE", where=say["clean_where"].format(line=1, cell="sdpa"), lacking="`D_K_SEEN`")
    assert not mask["passed"] and mask["explained"] == say["clean_missing_stopped"].format(
        name="causal_mask", cell="causal_mask", error="NameError: name 'OFFSET_SEEN' is not defined"), mask
    assert not any(" " in name for name in results), "a cell that stopped is no test result"


def test_the_plan_keeps_what_the_notebook_and_earlier_answers_bound() -> None:
    # A constant of the first answer is read by a constant of a later one; a notebook import by both.
    source = read(source_notebook("01_attention"))
    answers = reference_answers(source)
    student = student_notebook("01_attention", {
        "sdpa": "_FILL = torch.finfo(torch.float32).min\n" + answers["sdpa"],
        "causal_mask": "_ALSO_FILL = _FILL / 2\n" + answers["causal_mask"],
    })
    plan = clean_rerun.clean_plan(student, source)
    codes = {c.grade_id: c.source for c in plan.cells if c.kind == "answer"}
    assert codes["sdpa"].startswith("_FILL = torch.finfo(torch.float32).min"), codes["sdpa"]
    assert codes["causal_mask"].startswith("_ALSO_FILL = _FILL / 2"), codes["causal_mask"]
    assert "torch" in notebook_bindings(source) and plan.omissions == ()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_feedback_page_explains_what_the_clean_rerun_lacked(language: str, tmp_path: Path) -> None:
    # The kernel passed t1, the clean re-run failed it for a name a left-out line bound: the page says which and why.
    kept = extract_definitions("_W = torch.tensor(SCRATCH)\n", PROTECTED, {"torch"}, "classifier")
    message = "NameError: name '_W' is not defined"
    clean = {"a": {"t1": {"passed": False, "message": message, "explained": explain(message, kept.omissions, [],
                                                                                    language)}}}
    kernel = KernelRun(Outcome(0, False, 1.0, ""), {("a", "t1"): 1.0}, {}, [])
    result = SubmissionResult("a", "ann", Status.GRADED, tests=[CellResult("a", "t1", 1.0)])
    award(GradeJob(Course(tmp_path), "a", "ann", tmp_path, tmp_path), result, kernel, clean)
    assert result.tests[0].score == 0.0 and result.flags, result
    line = next(line for line in summary_cell(result, "a", Secrets(frozenset()), words(language)).source.splitlines()
                if line.startswith("| `t1`"))
    say = words(language)
    where = say["clean_where"].format(line=1, cell="classifier")
    assert say["clean_rerun"] + say["clean_missing_state"].format(name="_W", where=where, lacking="`SCRATCH`") in line
    assert "NameError" not in line and (language == "en" or "clean re-run" not in line), line


@pytest.mark.parametrize("notebook", assignment_ids())
def test_the_clean_rerun_leaves_out_nothing_of_the_reference_answers(notebook: str) -> None:
    plan = clean_rerun.clean_plan(student_notebook(notebook, {}), read(source_notebook(notebook)))
    assert plan.omissions == (), plan.omissions
