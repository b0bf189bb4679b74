"""Honest answers that lean on what an answer cell may define besides its function: for every exercise of every
notebook, its reference answer with one kind of module-level help added and used (the rule they test:
:mod:`autograder.pipeline.job.kept_code`).

Each kind adds a prelude above the reference answer and a check at the top of every function and method of the
answer's top-level definitions, so that each test that calls the answer reads what the prelude defined: a
clean re-run that left a line of the prelude out fails the test with ``NameError``. Built from the reference
answers, so they stay correct as the notebooks change. Kept apart from the mutants and alternatives written by
hand in ``testbed/variants/``, which ``tests/test_variants.py`` grades as the kernel runs them only.
"""

import ast
import textwrap
from dataclasses import dataclass

from nbformat import NotebookNode

from testbed.notebooks import answer_cells
from testbed.variants.spec import Variant, alternative


@dataclass(frozen=True)
class Kind:
    """One kind of help: code above the answer, and statements at the top of each function that use it."""

    name: str
    prelude: str
    check: str


KINDS = (
    Kind(
        "constants_from_calls",
        """
        import math
        import torch

        _GATE_BIAS = math.log(3.0)
        _ONE = torch.tensor(1.0)
        _ROOT_TWO = math.sqrt(2.0)
        _HALF: float = 1 / _ROOT_TWO**2
        """,
        "assert abs(math.exp(_GATE_BIAS) - 3.0) < 1e-9 and _ONE.item() == 1.0 and abs(_HALF - 0.5) < 1e-9",
    ),
    Kind(
        "helper_function",
        """
        import math


        def _unit(value: float = math.sqrt(4.0)) -> float:
            return value / value
        """,
        "assert _unit() == 1.0",
    ),
    Kind(
        "imports",
        """
        import math as _math
        from collections import OrderedDict as _OrderedDict

        try:
            from functools import lru_cache as _lru_cache
        except ImportError:
            _lru_cache = None
        """,
        "import operator as _operator\n"
        "assert _operator.add(_math.floor(_math.pi), 0) == 3 and _OrderedDict and _lru_cache is not None",
    ),
    Kind(
        "helper_variable",
        """
        _SIZES = tuple(range(1, 4))
        _SQUARES = {size: size * size for size in _SIZES}
        _LARGEST = max(_SQUARES.values())
        _NAMES, _COUNT = sorted(["b", "a"]), len(_SIZES)
        """,
        "assert _LARGEST == 9 and _NAMES == ['a', 'b'] and _COUNT == 3",
    ),
)


def with_kinds(reference: str, kinds: tuple[Kind, ...] = KINDS) -> str:
    """``reference`` with every kind's prelude above it and their checks first in every function and method."""
    tree = ast.parse(reference)
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    functions += [
        method for node in tree.body if isinstance(node, ast.ClassDef)
        for method in node.body if isinstance(method, ast.FunctionDef)
    ]
    if not functions:
        raise ValueError("no function in the reference answer to put the checks in")
    for function in functions:
        function.body[:0] = [statement for kind in kinds for statement in ast.parse(kind.check).body]
    preludes = "\n\n\n".join(textwrap.dedent(kind.prelude).strip() for kind in kinds)
    return preludes + "\n\n\n" + ast.unparse(tree) + "\n"


def honest_variants(source: dict[str, str]) -> list[Variant]:
    """One honest variant for each code answer of a notebook, ``source``: {grade id: reference answer}, that uses
    every kind at once (one graded run per answer rather than four: the suite's time; a failure names the kinds)."""
    name = "+".join(kind.name for kind in KINDS)
    return [alternative(cell, name, with_kinds(reference)) for cell, reference in source.items()]


def code_answers(notebook: NotebookNode) -> dict[str, str]:
    """{grade id: reference answer} of a source notebook's code answer cells."""
    return {cell: answer.source for cell, answer in answer_cells(notebook).items()}
