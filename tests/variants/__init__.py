"""Mutants and alternatives per assignment, for tests/test_variants.py."""

from variants import attention
from variants.spec import Variant

VARIANTS: dict[str, list[Variant]] = {
    "01_attention": attention.VARIANTS,
}
