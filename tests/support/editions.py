"""The Chinese edition in the tests: the committed translations, with a five-cell sample of 01 beneath them.

The sample (``tests/data/zh_sample_01_attention.yaml``) lets the grading and checker tests run on
real Chinese text before the translators' files arrive; a committed translation of a cell takes
precedence over the sample's.
"""

from pathlib import Path

import yaml

from editions.translations import Translation, load

LANGUAGE = "zh"
SAMPLE_ASSIGNMENT = "01_attention"
SAMPLE = Path(__file__).resolve().parents[1] / "data" / f"{LANGUAGE}_sample_{SAMPLE_ASSIGNMENT}.yaml"


def sample() -> dict[str, Translation]:
    entries = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    return {cell_id: Translation(entry["en"], entry["text"]) for cell_id, entry in entries.items()}


def translations_with_sample(assignment: str) -> dict[str, Translation]:
    committed = load(LANGUAGE, assignment)
    return {**(sample() if assignment == SAMPLE_ASSIGNMENT else {}), **committed}
