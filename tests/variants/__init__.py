"""Mutants and alternatives per assignment, for tests/test_variants.py.

Each module in this package declares ``ASSIGNMENT`` (the notebook it targets) and ``VARIANTS``;
every module is found here by itself, so adding a notebook's variants is adding one file.
"""

import importlib
import pkgutil

from tests.variants.spec import Variant


def _discover() -> dict[str, list[Variant]]:
    found: dict[str, list[Variant]] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if module_info.name in {"spec", "rules"}:  # the variant type, and the rule -> test -> mutant table
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        if module.ASSIGNMENT in found:
            raise ValueError(f"two variant modules target {module.ASSIGNMENT}")
        found[module.ASSIGNMENT] = list(module.VARIANTS)
    return found


VARIANTS: dict[str, list[Variant]] = _discover()
