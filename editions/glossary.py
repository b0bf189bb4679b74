"""The glossary check: where an English cell uses a glossary term, its translation uses the glossary's term.

How a term is found in the prose (:func:`editions.markup.prose`), what the translation must hold, and the ``not``,
``never``, ``gloss`` and exceptions lists: docs/editions.md. Longer terms are found first and hide the words they
contain: ``key-value cache`` asks for 键值缓存, not also 键 and 值. A variant marked as wrong in one sense only
(``标记（指词元时）``) is not checked, since no program can tell the sense. An entry ``{en: A / B, zh: 甲 / 乙}`` is
two terms, A -> 甲 and B -> 乙; ``{en: A / B, zh: 甲}`` is two English terms with the same Chinese term.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from editions.markup import prose
from editions.translations import EDITIONS

PARENTHESISED = re.compile(r"^(.*?)（(.*?)）$")


@dataclass(frozen=True)
class Term:
    english: str
    chinese: str
    first: str
    also: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()
    never: tuple[str, ...] = ()  # wrong in every cell, whether or not its English uses the term
    gloss: str = ""  # the full form of the notebook's first use, e.g. 词元（token）
    pattern: re.Pattern = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", english_pattern(self.english))
        if self.gloss and not (self.gloss.startswith(self.chinese + "（") and self.gloss.endswith("）")):
            raise ValueError(f"the gloss of '{self.english}' must be {self.chinese}（...）, not {self.gloss}")

    @property
    def accepted(self) -> tuple[str, ...]:
        forms = [self.chinese, *self.also]
        match = PARENTHESISED.match(self.chinese)
        if match:
            forms += [match.group(1), match.group(2)]
        # An English word kept in the Chinese may stand in the singular (logit for logits).
        forms += [form[:-1] for form in forms if form.isascii() and form.endswith("s") and len(form) > 3]
        return tuple(form for form in forms if form)


def english_pattern(term: str) -> re.Pattern:
    """The term as a regular expression: whole words, any case, plural and spelling variants."""
    words = re.split(r"[-\s]+", term.strip())
    parts = [re.escape(word).replace("isation", "i[sz]ation") for word in words]
    last = words[-1]
    if last.endswith("y") and len(last) > 2 and last[-2] not in "aeiou":
        parts[-1] = re.escape(last[:-1]) + "(?:y|ies)"
    elif re.search(r"(s|x|z|ch|sh)$", last):
        parts[-1] += "(?:es)?"
    else:
        parts[-1] += "s?"
    return re.compile(r"(?<![\w-])" + r"[-\s]*".join(parts) + r"(?![\w-])", re.I)


ONE_SENSE_ONLY = re.compile(r"（指.*时）")


def entry_terms(entry: dict, language: str) -> list[Term]:
    """The terms of one glossary entry (the translation under the edition's code): one, one per pair of an
    ``A / B`` entry, or one per English term of an ``{en: A / B, <code>: 甲}`` entry."""
    english, chinese = ([t.strip() for t in str(entry[key]).split(" / ")] for key in ("en", language))
    if len(chinese) == 1:
        chinese *= len(english)
    elif len(english) != len(chinese):
        english, chinese = [entry["en"]], [str(entry[language])]
    wrong = tuple(w for w in entry.get("not", ()) if not ONE_SENSE_ONLY.search(str(w)))
    also, never, gloss = tuple(entry.get("also", ())), tuple(entry.get("never", ())), entry.get("gloss", "")
    return [
        Term(en, zh, entry.get("first", ""), also, wrong, never, gloss) for en, zh in zip(english, chinese, strict=True)
    ]


def load_terms(language: str, path: Path | None = None) -> list[Term]:
    """The glossary's terms, longest English first."""
    data = yaml.safe_load((path or EDITIONS / language / "glossary.yaml").read_text(encoding="utf-8"))
    terms = [term for entry in data["terms"] for term in entry_terms(entry, language)]
    return sorted(terms, key=lambda term: -len(term.english))


def load_exceptions(language: str, assignment: str) -> dict[str, set[str]]:
    """Cell id -> the English terms not to check in that cell (used there in another sense)."""
    path = EDITIONS / language / "glossary_exceptions.yaml"
    data = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.exists() else {}
    return {cell: {entry["term"] for entry in entries} for cell, entries in (data.get(assignment) or {}).items()}


def terms_used(english: str, terms: list[Term]) -> list[Term]:
    """The glossary terms the English cell uses in its prose, longer terms hiding the words they contain."""
    text, used = prose(english), []
    for term in terms:
        text, found = term.pattern.subn(lambda m: "\0" * len(m.group(0)), text)
        if found:
            used.append(term)
    return used


@dataclass(frozen=True)
class Problem:
    cell_id: str
    term: Term
    wrong: str | None = None  # the forbidden variant found, or None when the term is missing

    def __str__(self) -> str:
        if self.wrong:
            return f"{self.cell_id}: '{self.term.english}' is {self.term.chinese}, not {self.wrong}"
        return f"{self.cell_id}: '{self.term.english}' should be {self.term.chinese} (accepted: {self.term.accepted})"


def check_cell(
    cell_id: str, english: str, translated: str, terms: list[Term], skip: set[str] = frozenset()
) -> tuple[int, list[Problem]]:
    """How many terms the cell uses, and each term its translation renders otherwise (``skip``: terms not checked)."""
    used = [term for term in terms_used(english, terms) if term.english not in skip]
    words, problems = prose(translated), []
    for term in used:
        if not any(form.lower() in words.lower() for form in term.accepted):
            problems.append(Problem(cell_id, term))
        problems += [Problem(cell_id, term, wrong) for wrong in term.wrong if wrong in words]
    flagged = {problem.wrong for problem in problems}
    for term in terms:  # the variants wrong everywhere, in cells not using the term too, each once
        if term.english in skip:
            continue
        for never in term.never:
            if never in words and never not in flagged:
                flagged.add(never)
                problems.append(Problem(cell_id, term, never))
    return len(used), problems


@dataclass(frozen=True)
class GlossProblem:
    cell_id: str
    term: Term
    first: bool  # True: the notebook's first use lacks the gloss; False: a later use repeats it

    def __str__(self) -> str:
        if self.first:
            return f"{self.cell_id}: the notebook's first {self.term.chinese} must be written {self.term.gloss}"
        return f"{self.cell_id}: {self.term.gloss} again: only the notebook's first {self.term.chinese} is glossed"


def gloss_problems(cells: dict[str, str], terms: list[Term]) -> list[GlossProblem]:
    """Each glossed term whose first use in ``cells`` (cell id -> translation, in the notebook's order) is not
    written with its gloss, or whose gloss comes again after it."""
    problems, glossed = [], {(term.chinese, term.gloss): term for term in terms if term.gloss}
    for term in glossed.values():
        seen = False
        for cell_id, text in cells.items():
            words = prose(text)
            for match in re.finditer(re.escape(term.chinese), words):
                with_gloss = words.startswith(term.gloss, match.start())
                if with_gloss == seen:  # the first without its gloss, or a later one with it
                    problems.append(GlossProblem(cell_id, term, first=not seen))
                seen = True
    return problems
