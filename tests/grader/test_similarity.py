"""The similarity report: normalisation, the robust z-score, and planted copies in a class of every notebook."""

import ast
import json
import math
import re

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.cli import main
from autograder.course.notebooks import reference_answers
from autograder.course.settings import release_notebook, source_notebook
from autograder.similarity import behaviour, scores
from autograder.similarity.answers import ClassWork, Submission, read_class, release_code
from autograder.similarity.canonical import helpers_of, parse
from autograder.similarity.compare import (
    LISTED_Z,
    closest_matches,
    compare_assignment,
    compare_class,
    reference_closeness,
)
from autograder.similarity.fingerprints import MAGIC, Context, fingerprint, normalise, structure
from autograder.similarity.page import assignment_section
from testbed.notebooks import read
from testbed.similarity_class import DESIGNS, answer_pool, build_class, build_disguised_class, hand_in
from testbed.similarity_disguises import FAMILIES, TRIPLES, course_parameters, disguised
from testbed.similarity_margins import reference_margin
from tests.support.course import ThrowawayCourse

ANSWER = """def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., Lq, Lk)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return weights @ value, weights
"""
DISGUISED = """def scaled_dot_product_attention(q, k, v, m=None, drop=None):
    # my own work


    size = q.size(-1)
    s = q @ k.transpose(-2, -1,) / (math.sqrt(size))
    if m is not None:   # masking
        s = s.masked_fill(~m, torch.finfo(s.dtype).min)
    w = s.softmax(dim = -1)
    return w @ v, w
"""


def test_comments_whitespace_renames_and_formatting_leave_the_fingerprints_alone() -> None:
    assert normalise(ANSWER).text == normalise(DISGUISED).text
    assert fingerprint(ANSWER).hashes == fingerprint(DISGUISED).hashes and len(fingerprint(ANSWER)) > 5


def test_library_calls_and_which_variable_goes_where_still_count() -> None:
    # Normalised code, not the winnowed fingerprints: winnowing promises to see every shared run of
    # K + WINDOW - 1 characters, not every one-character difference (which of a line's hashes it keeps
    # depends on the hash function).
    assert normalise(ANSWER).text != normalise(ANSWER.replace("softmax(dim=-1)", "softmax(dim=-2)")).text
    assert normalise("x = a.tril()").text != normalise("x = a.triu()").text
    assert normalise("y = f(x, mem, mem)").text != normalise("y = f(x, x, x)").text


def test_swapping_statements_keeps_every_fingerprint() -> None:
    lines = ANSWER.splitlines()
    swapped = "\n".join([lines[0], lines[2].replace("d_k", "query.size(-1)"), *lines[3:]])
    assert fingerprint(swapped).hashes <= fingerprint(ANSWER).hashes | fingerprint(swapped).hashes
    first, second = "    a = x.sum(0)\n", "    b = y.mean(1)\n"
    assert fingerprint(f"def f(x, y):\n{first}{second}").hashes == fingerprint(f"def f(x, y):\n{second}{first}").hashes


def same_structure(first: str, second: str) -> bool:
    return normalise(structure(first)).text == normalise(structure(second)).text


HELPER = """def _logits(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))


def attention(query, key, value):
    weights = _logits(query, key).softmax(-1)
    return weights @ value
"""


INLINED = """def attention(q, k, v):
    w = (q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))).softmax(-1)
    return w @ v
"""


def test_a_helper_inlined_is_the_same_structure() -> None:
    assert same_structure(HELPER, INLINED)
    assert not same_structure(HELPER, INLINED.replace("softmax(-1)", "softmax(-2)"))
    # A helper with assignments folds them first; one that does more (a loop) is left alone.
    assigned = HELPER.replace("    return q @", "    s = q @").replace("(q.size(-1))\n", "(q.size(-1))\n    return s\n")
    assert same_structure(assigned, INLINED)
    looping = HELPER.replace("    return q @", "    for _ in range(2):\n        q = q * 1\n    return q @")
    assert not same_structure(looping, INLINED)


def test_a_helper_in_the_added_cells_is_inlined_into_the_answer() -> None:
    helper, answer = HELPER.split("\n\n\n")
    assert normalise(structure(answer, helpers_of(helper))).text == normalise(structure(INLINED)).text
    assert normalise(structure(answer)).text != normalise(structure(INLINED)).text


def test_single_use_temporaries_fold_into_their_use() -> None:
    assert same_structure("def f(x):\n    y = x.sum(0)\n    return g(y)\n", "def f(x):\n    return g(x.sum(0))\n")
    # Used twice, or something in between rewrites what it reads: kept.
    assert not same_structure("def f(x):\n    y = x.sum(0)\n    return g(y, y)\n",
                              "def f(x):\n    return g(x.sum(0), x.sum(0))\n")
    assert not same_structure("def f(x):\n    y = x.sum(0)\n    x = x * 2\n    return g(y, x)\n",
                              "def f(x):\n    x = x * 2\n    return g(x.sum(0), x)\n")


def test_free_statements_take_one_order_and_dependent_ones_keep_theirs() -> None:
    start, end = "def f(x):\n    pe = torch.zeros(4, 4)\n", "    return pe\n"
    first = f"{start}    pe[:, 0::2] = x.sin()\n    pe[:, 1::2] = x.cos()\n{end}"
    swapped = f"{start}    pe[:, 1::2] = x.cos()\n    pe[:, 0::2] = x.sin()\n{end}"
    assert same_structure(first, swapped)
    shift = "def f(t, b):\n    t[:, 1:] = t[:, :-1].clone()\n    t[:, 0] = b\n    return t\n"
    reordered = "def f(t, b):\n    t[:, 0] = b\n    t[:, 1:] = t[:, :-1].clone()\n    return t\n"
    assert not same_structure(shift, reordered)  # the second reads what the first writes


def test_comments_docstrings_and_code_that_does_not_parse() -> None:
    documented = 'def f(x):\n    """Doc."""\n    # note\n    return x + 1\n'
    assert same_structure(documented, "def f(y):\n\n    return y + 1\n")
    broken = "def f(x:\n    return x\n"
    assert structure(broken) == broken and len(fingerprint(broken)) > 0


def test_the_release_stub_and_an_empty_answer_have_no_fingerprint() -> None:
    stub = "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    assert len(fingerprint(stub, boilerplate=frozenset(fingerprint(stub).hashes))) == 0
    assert len(fingerprint("")) == 0


def test_robust_z_against_the_median_and_mad_with_a_floor() -> None:
    values = np.array([[0, 0.2, 0.4], [0.2, 0, 1.0], [0.4, 1.0, 0]])
    pairs = np.triu(np.ones((3, 3), dtype=bool), k=1)
    z, median, mad = scores.robust_z(values, pairs)
    assert (median, mad) == (0.4, 0.2)
    assert z[1, 2] == pytest.approx((1.0 - 0.4) / (1.4826 * 0.2)) and z[0, 1] == pytest.approx(-0.2 / (1.4826 * 0.2))
    agreeing = np.full((3, 3), 0.9)
    z, _, mad = scores.robust_z(agreeing, pairs)
    assert mad == 0 and np.all(z[pairs] == 0)  # everyone agrees: nobody stands out, nothing divides by 0
    agreeing[0, 1] = agreeing[1, 0] = 1.0
    z, _, _ = scores.robust_z(agreeing, pairs)
    assert z[0, 1] == pytest.approx(0.1 / (1.4826 * scores.MAD_FLOOR))


# Whole classes per notebook: in make test, not in the edit-test loop (the canonical form's unit tests are).
@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_copies_rank_above_every_independent_pair(
    assignment: str, seed: int, throwaway_course: ThrowawayCourse
) -> None:
    """Every notebook (``assignment`` is parametrised by tests/conftest.py), three classes each."""
    made = build_class(assignment, students=30, copies=3, seed=seed)
    course = throwaway_course(assignment)
    hand_in(course, made)
    result, _ = compare_assignment(course, assignment)
    ranks = sorted(result.rank(*sorted(pair)) + 1 for pair in made.copies)
    planted_z = sorted(float(result.z[rank - 1]) for rank in ranks)
    best = next(result.pair(rank) for rank in range(len(result)) if rank + 1 not in ranks)
    margin = planted_z[0] - best.z
    print(f"{assignment} seed {seed}: planted ranks {ranks}, z {[round(z, 1) for z in planted_z]}, best independent "
          f"{best.first}/{best.second} z {best.z:.1f}, margin {margin:+.1f}")
    blank = set(made.untouched) | set(made.empty)
    assert not [p for p in result.listed() if {p.first, p.second} & blank]
    blank_index = np.array([student in blank for student in result.students])
    both_blank = blank_index[result.first] & blank_index[result.second]
    assert np.all(result.z[both_blank] <= 0)  # two blank notebooks: no copy
    assert margin > 0, f"planted copies at ranks {ranks}"
    assert all(rank <= len(result.listed()) for rank in ranks)  # the top of the class is always listed


def test_the_command_writes_the_page_and_the_export_reads_the_closest_match(throwaway_course: ThrowawayCourse) -> None:
    assignment = "01_attention"
    made = build_class(assignment, students=12, copies=2)
    hostile = "<script>alert(1)</script>"
    for student in made.answers:
        if student.startswith("c"):
            made.answers[student] = {k: f"{v}\n# {hostile}\n" for k, v in made.answers[student].items()}
    rare = {"test_sdpa": "AssertionError: weights sum to 0.37, not 1"}  # a mistake nobody else makes
    independent = sorted(s for s in made.answers if s.startswith("s"))
    wrong = independent[0], next(s for s in independent[1:] if made.answers[s] != made.answers[independent[0]])
    for student in wrong:
        made.failures[student] = rare
    course = throwaway_course(assignment)
    hand_in(course, made)
    output = course.root / "similarity.html"
    assert main(["--root", str(course.root), "similarity", "--output", str(output), "--jobs", "1"]) == 0
    page = output.read_text()
    assert "ranks; it does not decide" in page and hostile not in page and "&lt;script&gt;" in page
    kept = json.loads(course.grading.file("similarity.json").read_text())["assignments"][assignment]
    assert set(kept["closest"]) == set(made.answers)
    # Failing the same test with the same message nobody else has tops the shared failures, whatever the code.
    sharing = {frozenset((p["first"], p["second"])): p for p in kept["sharing_failures"]}
    assert sharing[frozenset(wrong)]["failure_evidence"] == pytest.approx(math.log(len(made.answers) / 2))
    assert sharing[frozenset(wrong)]["z"] < kept["pairs"][0]["z"]  # their code is not what brings them together
    assert "fail the same tests the same way" in page
    blank = set(made.untouched) | set(made.empty)  # the stub's NotImplementedError is no evidence
    assert not [p for p in kept["sharing_failures"] if {p["first"], p["second"]} <= blank]
    closest = closest_matches(course)
    for pair in made.copies:
        first, second = sorted(pair)
        assert closest[(assignment, first)]["match"] == second or closest[(assignment, second)]["match"] == first


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("y = a @ b", "y = torch.matmul(a, b)"),
        ("y = a @ b", "y = a.matmul(b)"),
        ("y = k.mT", "y = k.transpose(-2, -1)"),
        ("y = k.transpose(-1, -2)", "y = torch.transpose(k, -2, -1)"),
        ("y = k.swapaxes(-1, -2)", "y = k.transpose(-2, -1)"),
        ("y = F.softmax(x, -1)", "y = x.softmax(dim=-1)"),
        ("y = torch.nn.functional.softmax(x, dim=-1)", "y = torch.softmax(x, -1)"),
        ("y = torch.tril(x)", "y = x.tril()"),
        ("y = torch.tril(x, 0)", "y = x.tril(diagonal=0)"),
        ("y = a != b", "y = a.ne(b)"),
        ("y = a != b", "y = torch.not_equal(a, b)"),
        ("y = torch.cat([a, b], 1)", "y = torch.concat([a, b], dim=1)"),
        ("y = x.size(-1)", "y = x.shape[-1]"),
        ("y = x.masked_fill(m, 0.0)", "y = x.masked_fill(value=0.0, mask=m)"),
        ("y = nn.Linear(d, e)", "y = torch.nn.Linear(in_features=d, out_features=e, bias=True)"),
        ("y = f(a=1, b=2)", "y = f(b=2, a=1)"),
        ("y = a & b", "y = torch.logical_and(a, b)"),
        ("y = a | b", "y = a.bitwise_or(b)"),
        ("y = ~m", "y = m.logical_not()"),
        ("y = -x", "y = torch.neg(x)"),
        ("y = s / math.sqrt(d)", "y = s * d ** -0.5"),
        ("y = s / d ** 0.5", "y = s * torch.rsqrt(d)"),
        ("y = s / x.sqrt()", "y = torch.true_divide(s, x.pow(0.5))"),
        ("x *= 2", "x.mul_(2)"),
        ("x = x.masked_fill(m, 0)", "x.masked_fill_(m, 0)"),
        ("nn.init.xavier_uniform_(w)", "torch.nn.init.xavier_uniform(w)"),
    ],
)
def test_spellings_of_one_operation_and_keyword_or_positional_arguments_are_one(first: str, second: str) -> None:
    assert same_structure(first, second)


def test_different_operations_stay_different() -> None:
    assert not same_structure("y = x.tril()", "y = x.triu()")
    assert not same_structure("y = x.softmax(-1)", "y = x.softmax(-2)")
    assert not same_structure("y = a @ b", "y = a * b")
    assert not same_structure("y = k.transpose(0, 1)", "y = k.transpose(-2, -1)")
    assert not same_structure("y = self.dropout(x)", "y = torch.dropout(self, x)")  # a module's call, not a method
    assert not same_structure("y = a & b", "y = a | b")
    assert not same_structure("y = x ** 0.5", "y = x ** 2")
    assert not same_structure("y = s / d ** 0.5", "y = s * d ** 0.5")
    assert not same_structure("x.mul_(2)", "x.add_(2)")


def test_the_alias_table_is_pytorchs_own() -> None:
    """Every ``torch`` function documented as "Alias for torch.X" is in the table, and nothing else."""
    torch = pytest.importorskip("torch")
    from autograder.similarity.spellings import ALIASES

    documented = {}
    for name in dir(torch):
        doc = getattr(getattr(torch, name, None), "__doc__", None)
        if isinstance(doc, str) and (found := re.search(r"Alias (?:for|of) :(?:func|meth):`torch\.(\w+)`", doc)):
            if found.group(1) != name:
                documented[name] = found.group(1)
    assert ALIASES == documented


def test_the_other_equivalences_are_pytorchs_documented_ones() -> None:
    """In-place methods, deprecated initialisers, logical operators and roots: each entry as PyTorch documents it."""
    torch = pytest.importorskip("torch")
    from torch.nn import init

    from autograder.similarity import spellings

    def documented_in_place(name: str) -> bool:
        in_place = getattr(torch.Tensor, f"{name}_", None)
        return bool(
            in_place is not None
            and re.search(rf"In-place version of :meth:`~?(?:torch\.)?Tensor\.{name}`", in_place.__doc__ or "")
            or re.search(rf"Out-of-place version of :meth:`~?(?:torch\.)?Tensor\.{name}_`",
                         getattr(torch.Tensor, name).__doc__ or "")
        )

    assert spellings.IN_PLACE == {name for name in spellings.SIGNATURES if documented_in_place(name)}
    deprecated = {n for n in dir(init) if re.search(rf"deprecated in favor of :func:`torch\.nn\.init\.{n}_`",
                                                   getattr(getattr(init, n), "__doc__", None) or "")}
    assert spellings.DEPRECATED_INIT == deprecated
    words = {ast.BitAnd: "AND", ast.BitOr: "OR", ast.BitXor: "XOR", ast.Invert: "NOT"}
    signs = {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
    flags = torch.tensor([True, True, False, False]), torch.tensor([True, False, True, False])
    logical = {**spellings.OPERATORS, **spellings.UNARY}
    for name, operator in logical.items():
        if type(operator) in words:
            bitwise = f"bitwise_{name.split('_')[1]}"
            assert (
                f"For bool tensors, it computes the logical {words[type(operator)]}." in getattr(torch, bitwise).__doc__
            )
            if type(operator) in signs:  # the Python operator is the bitwise function, on bools the logical one
                python = eval(f"a {signs[type(operator)]} b", {"a": flags[0], "b": flags[1]})
                assert torch.equal(python, getattr(torch, name)(*flags)), name
            else:
                assert torch.equal(~flags[0], getattr(torch, name)(flags[0])), name
    assert r"\text{out} = -1 \times \text{input}" in torch.neg.__doc__
    assert r"\text{out}_{i} = \sqrt{\text{input}_{i}}" in torch.sqrt.__doc__
    assert r"\text{out}_{i} = \frac{1}{\sqrt{\text{input}_{i}}}" in torch.rsqrt.__doc__
    assert "square root" in math.sqrt.__doc__
    assert spellings.ROOTS == {("torch", "sqrt"): 0.5, ("torch", "rsqrt"): -0.5, ("math", "sqrt"): 0.5}


COURSE = """from tfcourse.reference import EncoderLayer, MultiHeadAttention


def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
    raise NotImplementedError()
"""
MODEL = """class Stack(nn.Module):
    def __init__(self, d, h, n):
        super().__init__()
        self.attention = MultiHeadAttention(d, h)
        self.layers = nn.ModuleList([EncoderLayer(d, h, 4 * d) for _ in range(n)])

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
        return self.attention(x, x, x, mask)
"""


def test_calls_of_the_students_and_the_courses_functions_and_classes_take_one_form() -> None:
    """Keyword or positional, a default written out or left out: one form wherever the ``def`` can be read (the
    answer, the added cells, the release and what it imports from tfcourse); other arguments stay different."""
    from autograder.similarity.signatures import course_signatures, signatures_of

    course = Context(None, "", course_signatures(COURSE))

    def same(first: str, second: str, context: Context = course) -> bool:
        return normalise(structure(first, context=context)).text == normalise(structure(second, context=context)).text

    sdpa = "y = scaled_dot_product_attention(q, k, v, {})"
    assert same(sdpa.format("mask=m"), sdpa.format("m"))
    assert same(sdpa.format("dropout=d"), sdpa.format("None, d"))
    assert same(sdpa.format("mask=None"), sdpa.replace(", {}", ""))
    assert not same(sdpa.format("mask=m"), sdpa.format("dropout=m"))  # which parameter still counts
    assert not same(sdpa.format("mask=m"), sdpa.format("m"), Context(None))  # a signature nobody gave: kept apart
    assert same(
        "layer = EncoderLayer(d_model=8, num_heads=2, d_ff=16, dropout=0.1)", "layer = EncoderLayer(8, 2, 16, 0.1)"
    )
    keywords = MODEL.replace("layer(x, mask)", "layer(x, mask=mask)").replace("x, x, x, mask)", "x, x, x, mask=mask)")
    assert same(MODEL, keywords) and not same(MODEL, keywords, Context(None))
    assert not same(MODEL, MODEL.replace("layer(x, mask)", "layer(mask, x)"))
    # The student's own: a function with two returns (never inlined), and one from the added cells.
    own = "def pick(x, k, largest=True):\n    if k == 0:\n        return x\n    return x.topk(k, largest=largest)\n\n\n"
    assert same(f"{own}y = pick(x, k=3, largest=True)", f"{own}y = pick(x, 3)")
    added = Context(None, "", signatures_of(own))
    assert same("y = pick(x, k=3)", "y = pick(x, 3)", added) and not same("y = pick(x, k=3)", "y = pick(x, 3)")
    assert "pick(x, 3, kind=1)" in structure("y = pick(x, 3, kind=1)", context=added)  # does not fit: left as it is


def test_annotations_asserts_and_dead_code_are_dropped() -> None:
    plain = "def f(x, n):\n    y = x.sum(0)\n    return y / n\n"
    padded = (
        "def f(x: torch.Tensor, n: int) -> torch.Tensor:\n"
        "    unused = x.shape\n"
        "    y: torch.Tensor = x.sum(0)\n"
        "    assert y is not None, 'no sum'\n"
        "    if False:\n"
        "        print('debug')\n"
        "    return y / n * 1 + 0\n\n\n"
        "def _never_called(z):\n"
        "    return z\n"
    )
    assert normalise(structure(plain)).text != normalise(structure(padded)).text  # every function kept by default
    keep = Context(frozenset({"f"}))
    assert normalise(structure(plain, context=keep)).text == normalise(structure(padded, context=keep)).text
    # A function another cell calls is not dead; one the release asks for neither.
    assert "_never_called" in structure(padded, context=Context(frozenset({"f"}), "y = _never_called(3)"))
    assert "_never_called" in structure(padded, context=Context(frozenset({"f", "_never_called"})))
    assert not same_structure(plain, plain.replace("/ n", "/ n * 2"))
    # Hints and checks together, spelled otherwise: the imports hints need, an assert spelled out.
    spelled = ("from typing import Optional\nfrom __future__ import annotations\n\n\n"
               "def f(x: torch.Tensor, n: Optional[int]) -> torch.Tensor:\n"
               "    if n is None:\n        raise AssertionError('no n')\n    return x.sum(0) / n\n")
    assert normalise(structure(plain, context=keep)).text == normalise(structure(spelled, context=keep)).text
    assert "ValueError" in structure(spelled.replace("AssertionError", "ValueError"))  # another error is behaviour


MULTI = """def _scores(q, k):
    d = q.size(-1)
    s = q @ k.transpose(-2, -1)
    return s / math.sqrt(d)
"""


def test_a_helper_of_several_statements_is_inlined_from_the_answer_or_an_added_cell() -> None:
    caller = "def attention(query, key, value):\n    w = _scores(query, key).softmax(-1)\n    return w @ value\n"
    assert same_structure(f"{MULTI}\n\n{caller}", INLINED)
    assert normalise(structure(caller, helpers_of(MULTI))).text == normalise(structure(INLINED)).text
    assert normalise(structure(caller)).text != normalise(structure(INLINED)).text
    early = MULTI.replace("    s = q @", "    if d > 8:\n        return q\n    s = q @")  # two returns: kept
    assert not same_structure(f"{early}\n\n{caller}", INLINED)


def test_a_temporary_read_twice_folds_when_its_value_is_pure() -> None:
    assert same_structure(
        "def f(q):\n    d = q.size(-1)\n    return g(d, d)\n", "def f(q):\n    return g(q.shape[-1], q.shape[-1])\n"
    )
    # A call that may differ each time (a module, dropout, a random draw) or a new list is not folded.
    assert not same_structure(
        "def f(x):\n    y = self.drop(x)\n    return y + y\n", "def f(x):\n    return self.drop(x) + self.drop(x)\n"
    )
    assert not same_structure(
        "def f(x):\n    out = []\n    out.append(x)\n    return out\n", "def f(x):\n    [].append(x)\n    return []\n"
    )


PLAIN = "def f(q, k):\n    s = q @ k.mT\n    w = s.softmax(-1)\n    return w @ k\n"
STATIC = """class _Ops:
    @staticmethod
    def run(q, k):
        s = q @ k.mT
        w = s.softmax(-1)
        return w @ k


def f(q, k):
    return _Ops.run(q, k)
"""
CALLED = """class _Attend:
    def __call__(impl, q, k):
        s = q @ k.mT
        w = s.softmax(-1)
        return w @ k


attend = _Attend()


def f(q, k):
    return attend(q, k)
"""


def test_helper_classes_static_methods_and_call_read_as_the_function() -> None:
    assert same_structure(STATIC, PLAIN)
    assert same_structure(CALLED, PLAIN)
    assert same_structure(CALLED.replace("return attend(q, k)", "return _Attend()(q, k)"), PLAIN)
    helper, answer = STATIC.split("\n\n\n")
    assert normalise(structure(answer, helpers_of(helper))).text == normalise(structure(PLAIN)).text
    assert not same_structure(STATIC.replace("softmax(-1)", "softmax(-2)"), PLAIN)
    # A class that keeps state (a method reads self) is a class, not a box of functions.
    stateful = CALLED.replace("def __call__(impl, q, k):", "def __call__(impl, q, k):\n        impl.calls = 1")
    assert not same_structure(stateful, PLAIN)


def test_loops_that_build_a_list_and_comprehensions_are_one() -> None:
    comprehension = "def f(xs, m):\n    return torch.stack([g(x) for x in xs if x.any()])\n"
    loop = ("def f(xs, m):\n    out = []\n    for x in xs:\n        if x.any():\n            out.append(g(x))\n"
            "    return torch.stack(out)\n")
    assert same_structure(loop, comprehension)
    assert same_structure(comprehension.replace("[g(x) for x in xs if x.any()]", "list(g(x) for x in xs if x.any())"),
                          comprehension)
    table = "def f(xs):\n    d = {}\n    for i, x in enumerate(xs):\n        d[x] = i\n    return d\n"
    assert same_structure(table, "def f(xs):\n    return {x: i for i, x in enumerate(xs)}\n")
    # A loop that does more than append is a loop.
    busy = loop.replace("            out.append(g(x))\n", "            out.append(g(x))\n            m = m + 1\n")
    assert not same_structure(busy, comprehension)


def test_fallbacks_logging_and_identity_wrappers_are_dropped() -> None:
    wrapped = """import logging
log = logging.getLogger(__name__)


def f(q, k):
    try:
        s = q @ k.mT
        log.debug("scores %s", s.shape)
        w = s.softmax(-1)
        print(w.sum())
    except RuntimeError:
        log.warning("falling back")
        w = torch.zeros_like(q)
    return (w @ k).clone().contiguous()
"""
    assert same_structure(wrapped, PLAIN)
    assert not same_structure(wrapped.replace("log.debug(", "k = k.float(").replace(', "scores %s"', ""), PLAIN)


def test_arithmetic_expanded_or_factored_and_reordered_is_one() -> None:
    expanded = "def f(d, h):\n    a = 4 * d * d + 4 * d\n    b = 2 * d * h + h + d\n    return a + b\n"
    factored = "def f(d, h):\n    return (d + 1) * d * 4 + h * (1 + 2 * d) + d\n"
    assert same_structure(expanded, factored)
    assert same_structure(
        "def f(x, y):\n    return (x + y) ** 2 / 2\n", "def f(x, y):\n    return x * y + 0.5 * x ** 2 + y * y / 2\n"
    )
    assert not same_structure(expanded, factored.replace("(d + 1)", "(d + 2)"))
    # ``+`` on a shape, a list or a string is not a sum of numbers: left as written.
    shape = "def f(x, h):\n    return x.view(x.shape[:-1] + (h, -1))\n"
    assert structure(shape) == "def f(x, h):\n    return x.view(x.shape[:-1] + (h, -1))"


def test_pytorchs_documented_equal_calls_are_one() -> None:
    pairs = [
        ("F.cross_entropy(x, y, reduction='sum')", "F.nll_loss(F.log_softmax(x, dim=1), y, reduction='sum')"),
        ("F.cross_entropy(x, y)", "torch.nn.functional.nll_loss(x.log_softmax(-1), y)"),
        ("torch.ones(a, b, dtype=torch.bool, device=x.device)", "x.new_ones((a, b), dtype=torch.bool)"),
        ("torch.zeros_like(x)", "x.new_zeros(x.shape)"),
        ("torch.full_like(x, 2.0)", "torch.full(x.size(), 2.0, dtype=x.dtype, device=x.device)"),
        ("x[:, :, 3]", "x.select(2, 3)"),
        ("x[..., -1]", "x.select(-1, -1)"),
        ("x", "torch.as_tensor(x)"),
    ]
    for first, second in pairs:
        assert same_structure(f"def f(x, y):\n    return {first}\n", f"def f(x, y):\n    return {second}\n")
    assert not same_structure("def f(x, y):\n    return F.cross_entropy(x, y)\n",
                              "def f(x, y):\n    return F.nll_loss(F.log_softmax(x, dim=0), y)\n")
    assert not same_structure(
        "def f(x):\n    return torch.zeros(x.shape)\n", "def f(x):\n    return x.new_zeros(x.shape)\n"
    )
    assert not same_structure("def f(x):\n    return torch.as_tensor([1, 2])\n", "def f(x):\n    return [1, 2]\n")


def test_the_equal_calls_are_pytorchs_documented_ones() -> None:
    """Each rule of :mod:`.equivalences` quotes PyTorch's documentation: the quotes are in the installed PyTorch."""
    torch = pytest.importorskip("torch")
    squashed = lambda text: " ".join(text.split())  # noqa: E731
    assert (
        "is equivalent to applying :class:`~torch.nn.LogSoftmax` on an input, followed by :class:`~torch.nn.NLLLoss`"
        in squashed(torch.nn.CrossEntropyLoss.__doc__)
    )
    for kind in ("zeros", "ones", "empty", "full"):
        assert f"``torch.{kind}_like(input" in squashed(getattr(torch, f"{kind}_like").__doc__)
        assert "dtype=input.dtype, layout=input.layout, device=input.device)``" in squashed(
            getattr(torch, f"{kind}_like").__doc__
        )
        assert ("By default, the returned Tensor has the same :class:`torch.dtype` and :class:`torch.device` as this "
                "tensor.") in squashed(getattr(torch.Tensor, f"new_{kind}").__doc__)
    assert "tensor.select(2, index)`` is equivalent to ``tensor[:,:,index]``" in squashed(torch.select.__doc__)
    assert (
        "If :attr:`data` is already a tensor with the requested dtype and device then :attr:`data` itself is "
        "returned" in squashed(torch.as_tensor.__doc__)
    )


def run_answers(code: str, names: tuple[str, ...]) -> dict:
    import torch
    from torch import nn
    from torch.nn import functional

    namespace = {"torch": torch, "nn": nn, "F": functional, "math": math}
    exec(code, namespace)  # our own reference answers
    return {name: namespace[name] for name in names}


@pytest.mark.parametrize("family", [(f,) for f in FAMILIES] + list(TRIPLES), ids="+".join)
def test_each_disguise_computes_what_its_source_computes(family: tuple[str, ...]) -> None:
    """The disguises, run on 01's reference answers (or, per exercise, where a family of ``family`` does not take the
    reference's, such as calls of the student's own functions, the first answer of the class's that takes one more):
    the same outputs on fixed inputs."""
    torch = pytest.importorskip("torch")
    reference = reference_answers(read(source_notebook("01_attention")))
    course = course_parameters("01_attention")
    chosen, covered = [], set()
    for exercise in ("sdpa", "causal_mask", "padding_mask"):
        options = [reference[exercise], *answer_pool("01_attention")[exercise]]
        takes = [disguised(answer, family, [], course)[1] - covered for answer in options]
        best = max(range(len(options)), key=lambda i: (len(takes[i]), -i))
        chosen.append(options[best])
        covered |= takes[best]
    code = "\n\n".join(chosen)
    added: list[str] = []
    copy, applied = disguised(code, family, added, course)
    assert applied == set(family) and copy != code
    names = ("scaled_dot_product_attention", "causal_mask", "padding_mask")
    source, copied = run_answers(code, names), run_answers("\n\n".join([*added, copy]), names)
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=generator) for _ in range(3))
    mask = torch.rand(2, 1, 5, 5, generator=generator) > 0.3
    ids = torch.tensor([[4, 2, 0, 0], [1, 0, 3, 0]])
    for one, other in zip(source["scaled_dot_product_attention"](q, k, v, mask),
                          copied["scaled_dot_product_attention"](q, k, v, mask), strict=True):
        assert torch.equal(one, other)
    assert torch.equal(source["causal_mask"](5), copied["causal_mask"](5))
    assert torch.equal(source["padding_mask"](ids, 0), copied["padding_mask"](ids, 0))


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS)
def test_each_disguise_family_alone_and_three_at_a_time_ranks_above_every_independent_pair(
    assignment: str, design: str, throwaway_course: ThrowawayCourse
) -> None:
    """One class per notebook and design: 30 independent students, a copy per family alone and per combination."""
    made = build_disguised_class(assignment, students=30, design=design)
    course = throwaway_course(assignment)
    hand_in(course, made)
    result, _ = compare_assignment(course, assignment)
    ranks = {copier: result.rank(*sorted((copier, made.source[copier]))) for copier in made.families}
    verbatim = result.rank(*made.verbatim)
    best = next(rank for rank in range(len(result)) if rank not in {*ranks.values(), verbatim})
    for copier, rank in sorted(ranks.items(), key=lambda item: item[1]):
        print(f"{assignment} {'+'.join(made.families[copier])}: rank {rank + 1}, z {result.z[rank]:.2f}")
    print(f"{assignment}: best independent pair z {result.z[best]:.2f}, "
          f"margin {min(result.z[r] for r in ranks.values()) - result.z[best]:+.2f}")
    missed = {"+".join(made.families[c]): rank + 1 for c, rank in ranks.items() if rank > best}
    assert not missed, f"ranked below the best independent pair (rank {best + 1}): {missed}"
    assert result.can_tell  # 30 students: a copy can stand out in every notebook (the page says nothing of the kind)
    # Two identical notebooks whose answers nobody else wrote: above every independent pair, listed.
    listed = len(result.listed())
    assert verbatim < best and verbatim < listed, (
        f"expected the two identical notebooks above the best independent pair (rank {best + 1}) and listed "
        f"({listed} listed); they rank {verbatim + 1}, z {result.z[verbatim]:.2f}: their answers are not their own "
        "(build_disguised_class), or the measure ranks what the class shares above them"
    )


@pytest.mark.slow  # builds a class of 30 students (about 8 s): with the classes it checks
def test_the_disguised_class_holds_what_it_says() -> None:
    """The planted-copy class's premises: no two independent students hand in the same notebook (the extra sources
    a family needs included), and the identical pair's answers are handed in by no one else where the pool has an
    answer nobody drew (an independent student's would leave a third identical notebook in the class)."""
    made = build_disguised_class("01_attention", students=30)
    independent = {student: answers for student, answers in made.answers.items() if student.startswith("s")}
    notebooks = [tuple(sorted(answers.items())) for answers in independent.values()]
    assert len(set(notebooks)) == len(notebooks) > 30, (
        f"expected {len(notebooks)} different notebooks (more than 30: 01 needs extra sources), "
        f"got {len(set(notebooks))}: a student was drawn twice"
    )
    first, second = (made.answers[student] for student in made.verbatim)
    assert first == second
    for exercise, options in answer_pool("01_attention").items():
        unwritten = set(options) - {answers[exercise] for answers in independent.values()}
        own = first[exercise].removesuffix("\n").rsplit("\n", 1)[0]  # less the seed line that ends it
        assert own in unwritten or not unwritten, (
            f"{exercise}: expected the identical pair to hand in one of the {len(unwritten)} answers of the pool "
            f"nobody else hands in, got one others wrote:\n{own}"
        )


def test_shared_failures_weigh_by_rarity_and_passing_shares_nothing() -> None:
    common, rare = "t1\nAssertionError: 0", "t2\nAssertionError: 0.37"
    failures = [frozenset({common, rare}), frozenset({common, rare}), frozenset({common}), frozenset()]
    count, evidence = behaviour.shared_failures(failures)
    assert count[0, 1] == 2 and evidence[0, 1] == pytest.approx(math.log(4 / 3) + math.log(4 / 2))
    assert count[0, 2] == 1 and evidence[0, 2] == pytest.approx(math.log(4 / 3))
    assert count[0, 3] == 0 and evidence[0, 3] == 0  # a correct answer shares no failure
    assert evidence[1, 0] == evidence[0, 1] and evidence[0, 0] == 0


def exercise_class(answers: dict[str, dict[str, str]]) -> ClassWork:
    """A notebook of one-function exercises (named by their function), and each student's answers to them."""
    cells = []
    for name in next(iter(answers.values())):
        cells.append(new_code_cell(f"def {name}(x):\n    raise NotImplementedError()\n"))
        cells[-1].metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": name, "locked": False}
    return ClassWork("short", new_notebook(cells=cells), [Submission(s, a) for s, a in answers.items()], {})


def one_exercise_class(answers: dict[str, str]) -> ClassWork:
    return exercise_class({student: {"f": answer} for student, answer in answers.items()})


def test_a_notebook_too_short_to_tell_says_so_and_lists_only_identical_notebooks_nobody_else_wrote() -> None:
    """One short exercise the whole class answers alike: even two identical answers nobody else wrote cannot
    reach the listing z, and the page says so; those two are still the one pair listed."""
    answers = dict.fromkeys([f"s{i}" for i in range(6)], "def f(x):\n    return x.sum(-1)\n")
    answers |= dict.fromkeys(["copy1", "copy2"], "def f(x):\n    return (x.exp() - 1).sum(-1) / x.shape[-1]\n")
    result = compare_class(one_exercise_class(answers), {})
    assert not result.can_tell and result.ceiling_z < LISTED_Z
    assert [(p.first, p.second) for p in result.listed()] == [("copy1", "copy2")]  # the verbatim copy still stands out
    section = "".join(assignment_section(result, one_exercise_class(answers), frozenset()))
    assert "Too short or too alike to tell" in section
    assert not result.too_small and "Too few students" not in section  # 8 students: the notebook is the cause


def test_a_pair_alike_through_one_exercise_as_high_as_pairs_alike_on_several_makes_the_page_say_so() -> None:
    """Independent students who share one rare answer (a single line) rank as a copy does: the page says so."""
    # Without the closest exercise: each pair's evidence with the exercise it gains most on at that one's median.
    evidence = {"f": np.array([[0, 5.0, 0], [5.0, 0, 1.0], [0, 1.0, 0]]), "g": np.array([[0, 2.0, 1.0], [2.0, 0, 1.0],
                                                                                       [1.0, 1.0, 0]])}
    answered = {part: np.triu(np.ones((3, 3), dtype=bool), k=1) for part in evidence}
    apart = scores.without_closest(evidence, answered)  # medians: f 1.0, g 1.0
    assert apart[0, 1] == 7.0 - 4.0 and apart[1, 2] == 2.0 and apart[0, 2] == 1.0
    ops = ["sum", "mean", "amax", "amin", "prod", "logsumexp", "std", "var", "nansum", "argmax"]
    answers = {
        f"s{i:02d}": {"f": f"def f(x):\n    return torch.{ops[i % 10]}(x, dim=-1)\n",
                      "g": f"def g(x):\n    return x.{ops[(3 * i) % 10]}(0).float()\n"}
        for i in range(12)
    }
    work = exercise_class(answers)
    result = compare_class(work, {})
    assert result.can_tell
    z, apart = np.zeros(len(result)), np.zeros(len(result))
    z[:3], apart[:3] = [4.2, 4.0, 3.9], [3.0, 0.4, 2.8]  # the second pair rests on one exercise, above the third
    result.z, result.z_apart = z, apart
    one_line = result.one_line()
    assert one_line is not None and (one_line.first, one_line.second) == (result.pair(1).first, result.pair(1).second)
    section = "".join(assignment_section(result, work, frozenset()))
    assert "Cannot tell a copy from one rare shared line" in section and "z without the closest exercise" in section
    apart[:3] = [3.0, 2.9, 0.4]  # the pair that rests on one exercise ranks below every pair alike on several
    assert result.one_line() is None
    assert "Cannot tell a copy" not in "".join(assignment_section(result, work, frozenset()))


ORIGINAL = "def f(x):\n    total = x.exp().sum(-1)\n    return total / x.shape[-1]\n"
RENAMED = "def f(inputs):\n    # mine\n    s = inputs.exp().sum(-1)\n    return s / inputs.shape[-1]\n"
OTHERS = ["def f(x):\n    return x.sum(-1)\n", "def f(x):\n    return x.mean(-1) * 2\n",
          "def f(x):\n    return torch.logsumexp(x, -1)\n", "def f(x):\n    return (x * x).sum(-1)\n",
          "def f(x):\n    return x.abs().max(-1).values\n", "def f(x):\n    return x.norm(dim=-1)\n"]


def test_the_smallest_class_to_rank_is_where_the_other_students_pairs_are_the_majority() -> None:
    """The robust z's median and MAD are set by the majority of pairs: those of the students not compared."""
    assert scores.MIN_STUDENTS == 8  # 15 of 28 pairs hold neither student of a pair; at 7, 10 of 21
    for students in range(2, 60):
        independent, everyone = math.comb(students - 2, 2), math.comb(students, 2)
        assert scores.enough_students(students) == (independent > everyone / 2) == (students >= 8), students


G_ORIGINAL = "def g(x):\n    y = x.softmax(-1)\n    return y.cumsum(-1)\n"
G_OWN = "def g(x):\n    return x.exp() / x.exp().sum(-1, keepdim=True)\n"
G_COMMON = "def g(x):\n    return x.softmax(-1)\n"


@pytest.mark.parametrize("others", [1, 5])
def test_a_class_too_small_to_rank_says_so_and_lists_the_answers_only_two_share(others: int) -> None:
    """3 (or 7) students who answered, one copying another's ``f`` with renamed names and writing their own ``g``:
    the page blames the class's size, not the notebook, ranks nothing and lists the pair by the answer only the two
    share; an answer more students share (``G_COMMON``, 5 of 7) lists no pair, and blank notebooks do not count."""
    answers = {"original": {"f": ORIGINAL, "g": G_ORIGINAL}, "copier": {"f": RENAMED, "g": G_OWN}}
    answers |= {f"s{i}": {"f": OTHERS[i], "g": G_COMMON} for i in range(others)}
    answers |= dict.fromkeys(["blank1", "blank2"], {"f": "", "g": ""})
    students = others + 2
    work = exercise_class(answers)
    result = compare_class(work, {})
    assert result.too_small and not result.can_tell and result.answered == students
    assert [({p.first, p.second}, p.same_alone) for p in result.listed()] == [({"original", "copier"}, 1)]
    section = "".join(assignment_section(result, work, frozenset()))
    pairs = math.comb(students, 2)
    assert (f"with {students} students who answered ({pairs} pairs) the class is too small to tell copied from "
            "independent work; at least 8 students are needed") in section
    assert ": 1 answer only they share</h3>" in section and "z " not in section.split("</h1>")[-1]
    assert "Too short or too alike" not in section and f"{students + 2} submissions" in section


def test_an_exercise_nobody_answered_scores_nothing_and_the_page_says_so() -> None:
    """A class that skipped an optional extra credit (``extra`` empty in every hand-in): the notebook is still
    compared on ``f``, the copy still stands out, and the page names the exercise nobody answered."""
    answers = {f"s{i}": {"f": OTHERS[i], "extra": ""} for i in range(6)}
    answers |= {"original": {"f": ORIGINAL, "extra": ""}, "copier": {"f": RENAMED, "extra": ""}}
    work = exercise_class(answers)
    result = compare_class(work, {})
    assert result.stats["extra"].answered == 0 and result.stats["extra"].pairs == 0
    assert result.stats["f"].answered == 8 and not result.too_small
    assert not result.part_answered["extra"].any() and not result.part_score["extra"].any()
    assert {result.pair(0).first, result.pair(0).second} == {"original", "copier"}
    section = "".join(assignment_section(result, work, frozenset()))
    assert "<strong>Nobody answered:</strong> extra (no pair is scored on it)." in section
    answered_only = one_exercise_class({student: answer["f"] for student, answer in answers.items()})
    assert "Nobody answered" not in "".join(assignment_section(compare_class(answered_only, {}), answered_only,
                                                               frozenset()))


def test_counts_agree_with_their_nouns() -> None:
    one = {"a": ORIGINAL, "b": OTHERS[0]}
    result = compare_class(one_exercise_class(one), {"f": ORIGINAL})
    section = "".join(assignment_section(result, one_exercise_class(one), frozenset()))
    assert "2 submissions, 1 pair, 0 listed." in section and "(1 pair)" in section
    assert "a: f (1 student hands in the same)" in section and "1 students" not in section


def test_the_canonical_form_takes_every_release_and_reference_answer(assignment: str) -> None:
    """The canonical form falls back to the code as written when it fails: it must not fail on the course's own code."""
    release = read(release_notebook(assignment))
    for code in [release_code(release), *reference_answers(read(source_notebook(assignment))).values()]:
        tree = parse(MAGIC.sub("", code))
        if tree is not None and any(isinstance(node, ast.FunctionDef | ast.ClassDef) for node in tree.body):
            assert structure(code) != code and parse(structure(code)) is not None


def test_the_report_reads_the_file_grade_takes_a_copys_name_included(throwaway_course: ThrowawayCourse) -> None:
    """A notebook collected under an LMS copy's name is compared; a link or a look-alike name is not read."""
    assignment = "01_attention"
    course = throwaway_course(assignment)
    release = read(release_notebook(assignment))
    for student, name in [("alice", f"{assignment} (1).ipynb"), ("bob", f"{assignment}_old.ipynb")]:
        folder = course.grading.submitted(student, assignment)
        folder.mkdir(parents=True)
        nbformat.write(release, folder / name)
    carol = course.grading.submitted("carol", assignment)
    carol.mkdir(parents=True)
    (carol / f"{assignment}.ipynb").symlink_to(release_notebook(assignment))
    work = read_class(course, assignment)
    assert [submission.student for submission in work.submissions] == ["alice"]
    assert not work.unreadable


def test_the_export_shows_no_z_score_for_a_class_too_small_to_rank(throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course("01_attention")
    pair = {"first": "alice", "second": "bob", "score": 0.98, "z": 7.24}
    kept = {name: {"closest": {"alice": pair}, "too_small": small} for name, small in [("small", True), ("big", False)]}
    path = course.grading.file("similarity.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"assignments": kept}))
    closest = closest_matches(course)
    assert closest[("small", "alice")] == {"match": "bob", "score": 0.98, "z": None}
    assert closest[("big", "alice")]["z"] == 7.2


def test_a_reworded_copy_of_the_published_reference_tops_the_reference_ranking_and_the_export() -> None:
    """The reference as one more classmate: a copy with its names, comments and layout changed stands out against it,
    as a copied pair does, and the page puts the two side by side (the student's code escaped)."""
    rng = np.random.default_rng(0)
    reference = {"f": "def f(x):\n    total = 0\n    for item in x:\n        total += item * item\n    return total\n",
                 "g": "def g(x):\n    return sorted(set(x), key=lambda v: (-v, v % 7))[:3]\n",
                 "h": "def h(x):\n    return {k: x.count(k) for k in x if k % 2}\n"}
    bodies = ["return x", "return x + 1", "return len(x)", "return max(x)", "return min(x) - 2", "return x * 3",
              "return sum(x)", "return list(reversed(x))", "return x[::2]", "return abs(x)", "return x ** 2",
              "return str(x)"]
    answers = {f"s{i:02d}": {name: f"def {name}(x):\n    {bodies[(i + 5 * k) % len(bodies)]}\n"
                             for k, name in enumerate("fgh")} for i in range(12)}
    answers["copier"] = {"f": "def f(x):\n    # <script>alert(1)</script>\n    acc = 0\n    for e in x:\n"
                              "        acc += e * e\n    return acc\n",
                         "g": "def g(x):\n    return sorted(set(x), key=lambda w: (-w, w % 7))[:3]\n",
                         "h": "def h(x):\n    # counted\n    return {q: x.count(q) for q in x if q % 2}\n"}
    work = exercise_class(dict(sorted(answers.items(), key=lambda _: rng.random())))
    result = compare_class(work, reference)
    matches = result.reference_matches()
    assert matches[0].student == "copier" and matches[0].z >= LISTED_Z, matches[:3]
    assert matches[0].score == pytest.approx(1.0) and set(matches[0].exercises) == {"f", "g", "h"}
    others = [z for student, z in zip(result.students, result.reference_z, strict=True) if student != "copier"]
    assert matches[0].z - max(others) >= LISTED_Z  # a toy class (independent answers share ~nothing): far apart
    section = "\n".join(assignment_section(result, work, frozenset()))
    assert "Closest to the published reference answers" in section and "copier and the published reference" in section
    assert "<script>" not in section and "&lt;script&gt;" in section


def test_the_export_reads_each_hand_in_s_closeness_to_the_reference(throwaway_course: ThrowawayCourse) -> None:
    course = throwaway_course("01_attention")
    kept = {name: {"closest": {}, "too_small": small, "reference": {"alice": {"score": 0.91, "z": z}}}
            for name, small, z in [("small", True, None), ("big", False, 5.3)]}
    path = course.grading.file("similarity.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"assignments": kept}))
    assert reference_closeness(course) == {("small", "alice"): {"score": 0.91, "z": None},
                                           ("big", "alice"): {"score": 0.91, "z": 5.3}}


@pytest.mark.slow
def test_each_disguised_copy_of_the_reference_ranks_above_every_independent_student(assignment: str):
    """One class per notebook: 30 independent students who never hand in the reference itself, and a copy of the
    reference per disguise family alone and three at a time, ranked by their z against the reference. (The popular
    design too: ``python -m testbed.similarity_margins --reference``, docs/similarity.md.)"""
    design = "uniform"
    found, result = reference_margin(assignment, design)
    print(f"{assignment} {design}: lowest reference copy z {found.lowest:.2f} ({found.weakest}), best independent "
          f"{found.best:.2f}, margin {found.margin:+.2f}, listed {len(result.reference_matches())}")
    assert not found.below, f"copies of the reference ranked at or below an independent student: {found.below}"
