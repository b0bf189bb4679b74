"""Mutants and alternatives per assignment, for tests/test_variants.py.

Each module in this package declares ``ASSIGNMENT`` (the notebook it targets) and ``VARIANTS``, and
may declare ``BLAMES`` (what a test cell that calls two answers says when one of them is wrong);
every module is found here by itself, so adding a notebook's variants is adding one file.
"""

import importlib
import pkgutil

from testbed.variants.spec import Blame, Variant


def _discover() -> tuple[dict[str, list[Variant]], dict[str, list[Blame]]]:
    variants: dict[str, list[Variant]] = {}
    blames: dict[str, list[Blame]] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name in {"spec", "rules"}:  # the variant type, and the rule -> test -> mutant table
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        if module.ASSIGNMENT in variants:
            raise ValueError(f"two variant modules target {module.ASSIGNMENT}")
        variants[module.ASSIGNMENT] = list(module.VARIANTS)
        blames[module.ASSIGNMENT] = list(getattr(module, "BLAMES", []))
    return variants, blames


VARIANTS, BLAMES = _discover()
