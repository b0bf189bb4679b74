"""The similarity report: normalisation, the robust z-score, and planted copies in a class of every notebook."""

import ast
import json
import math
import re

import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.cli import main
from autograder.course.notebooks import reference_answers
from autograder.course.settings import release_notebook, source_notebook
from autograder.similarity import behaviour, scores
from autograder.similarity.answers import ClassWork, Submission, release_code
from autograder.similarity.canonical import helpers_of, parse
from autograder.similarity.compare import LISTED_Z, closest_matches, compare_assignment, compare_class
from autograder.similarity.fingerprints import MAGIC, Context, fingerprint, normalise, structure
from autograder.similarity.page import assignment_section
from tests.support.course import ThrowawayCourse
from tests.support.notebooks import read
from tests.support.similarity_class import build_class, build_disguised_class, hand_in
from tests.support.similarity_disguises import FAMILIES, TRIPLES, disguised

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
                              "def f(x):\n    return g(x.sum(0), x.sum(0))\n")  # fmt: skip
    assert not same_structure("def f(x):\n    y = x.sum(0)\n    x = x * 2\n    return g(y, x)\n",
                              "def f(x):\n    x = x * 2\n    return g(x.sum(0), x)\n")  # fmt: skip


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
          f"{best.first}/{best.second} z {best.z:.1f}, margin {margin:+.1f}")  # fmt: skip
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


def run_answers(code: str, names: tuple[str, ...]) -> dict:
    import torch
    from torch import nn
    from torch.nn import functional

    namespace = {"torch": torch, "nn": nn, "F": functional, "math": math}
    exec(code, namespace)  # noqa: S102  (our own reference answers)
    return {name: namespace[name] for name in names}


@pytest.mark.parametrize("family", [(f,) for f in FAMILIES] + list(TRIPLES), ids="+".join)
def test_each_disguise_computes_what_its_source_computes(family: tuple[str, ...]) -> None:
    """The disguises, run on 01's reference answers: the same outputs on fixed inputs."""
    torch = pytest.importorskip("torch")
    reference = reference_answers(read(source_notebook("01_attention")))
    code = "\n\n".join(reference[e] for e in ("sdpa", "causal_mask", "padding_mask"))
    added: list[str] = []
    copy, applied = disguised(code, family, added)
    assert applied == set(family) and copy != code
    names = ("scaled_dot_product_attention", "causal_mask", "padding_mask")
    source, copied = run_answers(code, names), run_answers("\n\n".join([*added, copy]), names)
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=generator) for _ in range(3))
    mask = torch.rand(2, 1, 5, 5, generator=generator) > 0.3
    ids = torch.tensor([[4, 2, 0, 0], [1, 0, 3, 0]])
    for one, other in zip(source["scaled_dot_product_attention"](q, k, v, mask),
                          copied["scaled_dot_product_attention"](q, k, v, mask), strict=True):  # fmt: skip
        assert torch.equal(one, other)
    assert torch.equal(source["causal_mask"](5), copied["causal_mask"](5))
    assert torch.equal(source["padding_mask"](ids, 0), copied["padding_mask"](ids, 0))


@pytest.mark.slow
def test_each_disguise_family_alone_and_three_at_a_time_ranks_above_every_independent_pair(
    assignment: str, throwaway_course: ThrowawayCourse
) -> None:
    """One class per notebook: 30 independent students, a copy per family alone and per triple."""
    made = build_disguised_class(assignment, students=30)
    course = throwaway_course(assignment)
    hand_in(course, made)
    result, _ = compare_assignment(course, assignment)
    ranks = {copier: result.rank(*sorted((copier, made.source[copier]))) for copier in made.families}
    verbatim = result.rank(*made.verbatim)
    best = next(rank for rank in range(len(result)) if rank not in {*ranks.values(), verbatim})
    for copier, rank in sorted(ranks.items(), key=lambda item: item[1]):
        print(f"{assignment} {'+'.join(made.families[copier])}: rank {rank + 1}, z {result.z[rank]:.2f}")
    print(f"{assignment}: best independent pair z {result.z[best]:.2f}, "
          f"margin {min(result.z[r] for r in ranks.values()) - result.z[best]:+.2f}")  # fmt: skip
    missed = {"+".join(made.families[c]): rank + 1 for c, rank in ranks.items() if rank > best}
    assert not missed, f"ranked below the best independent pair (rank {best + 1}): {missed}"
    assert result.can_tell  # 30 students: a copy can stand out in every notebook (the page says nothing of the kind)
    # Two identical notebooks whose answers nobody else wrote: above every independent pair, listed.
    assert verbatim < best and verbatim < len(result.listed())


def test_shared_failures_weigh_by_rarity_and_passing_shares_nothing() -> None:
    common, rare = "t1\nAssertionError: 0", "t2\nAssertionError: 0.37"
    failures = [frozenset({common, rare}), frozenset({common, rare}), frozenset({common}), frozenset()]
    count, evidence = behaviour.shared_failures(failures)
    assert count[0, 1] == 2 and evidence[0, 1] == pytest.approx(math.log(4 / 3) + math.log(4 / 2))
    assert count[0, 2] == 1 and evidence[0, 2] == pytest.approx(math.log(4 / 3))
    assert count[0, 3] == 0 and evidence[0, 3] == 0  # a correct answer shares no failure
    assert evidence[1, 0] == evidence[0, 1] and evidence[0, 0] == 0


def one_exercise_class(answers: dict[str, str]) -> ClassWork:
    stub = new_code_cell("def f(x):\n    raise NotImplementedError()\n")
    stub.metadata["nbgrader"] = {"solution": True, "grade": False, "grade_id": "f", "locked": False}
    return ClassWork("short", new_notebook(cells=[stub]), [Submission(s, {"f": a}) for s, a in answers.items()], {})


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


def test_the_canonical_form_takes_every_release_and_reference_answer(assignment: str) -> None:
    """The canonical form falls back to the code as written when it fails: it must not fail on the course's own code."""
    release = read(release_notebook(assignment))
    for code in [release_code(release), *reference_answers(read(source_notebook(assignment))).values()]:
        tree = parse(MAGIC.sub("", code))
        if tree is not None and any(isinstance(node, ast.FunctionDef | ast.ClassDef) for node in tree.body):
            assert structure(code) != code and parse(structure(code)) is not None
