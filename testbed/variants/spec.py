"""A variant is another answer for one answer cell: a realistic mistake or another correct way."""

import textwrap
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Variant:
    """Either a full replacement ``source`` or ``replace`` pairs applied to the reference answer.

    Replacements must each match the reference, so a variant cannot silently go stale
    when the reference changes. ``spares`` names test cells of the exercise that a mutant must
    still pass: they check properties it does not break (a wrong rotation keeps its dtype), so
    a student who makes that mistake keeps their points.
    """

    cell: str
    name: str
    kind: Literal["mutant", "alternative"]
    replace: tuple[tuple[str, str], ...] = ()
    source: str = ""
    spares: tuple[str, ...] = ()

    def apply(self, reference: str) -> str:
        if self.source:
            return textwrap.dedent(self.source).strip() + "\n"
        changed = reference
        for old, new in self.replace:
            if old not in changed:
                raise ValueError(f"variant {self.cell}/{self.name}: {old!r} is not in the reference answer")
            changed = changed.replace(old, new)
        return changed

    @property
    def id(self) -> str:
        return f"{self.cell}-{self.kind}-{self.name}"


@dataclass(frozen=True)
class Blame:
    """What a test cell that calls two answers says when one of them is wrong: it names the one at fault.

    ``mutant`` (a :attr:`Variant.id`) fails ``test_cell``, and the cell's failure message holds ``says``
    and not ``not_says``, the words that would send the student to the other answer.
    """

    mutant: str
    test_cell: str
    says: str
    not_says: str


def mutant(cell: str, name: str, *replace: tuple[str, str], source: str = "", spares: tuple[str, ...] = ()) -> Variant:
    return Variant(cell, name, "mutant", tuple(replace), source, spares)


def alternative(cell: str, name: str, source: str) -> Variant:
    return Variant(cell, name, "alternative", source=source)
