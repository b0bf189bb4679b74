"""Every sentence the course prints or draws, in the reader's language: a gettext catalog read with Babel.

The English text is the message id, written where it is used: ``tr("shapes: passed")``, or with
fields, ``tr("the largest is {largest:.3g}", largest=value)`` (``str.format`` fields, so a
translation may put them in another order). The translations are gettext ``.po`` files, one per
notebook and one for this package, under ``tfcourse/locale/<edition>/``; ``python -m editions
messages zh`` extracts the ids from the notebooks and from :mod:`tfcourse` and updates them, and
``tests/test_messages.py`` fails while one is missing, stale or untranslated.

A message without a translation is shown in English, never dropped: a run never fails for want of
a translation.
"""

import re
import string
import unicodedata
from functools import cache
from pathlib import Path

from babel.messages.pofile import read_po

from tfcourse.language import ENGLISH, edition
from tfcourse.style import use_edition_font

LOCALE = Path(__file__).with_name("locale")
CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")  # Chinese characters and full-width marks
ALIGNED = re.compile(r"^(?:(?P<fill>.)(?=[<>^]))?(?P<align>[<>^])?(?P<width>\d+)$")


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal or a notebook's output: a Chinese character takes two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


class ColumnFormatter(string.Formatter):
    """``str.format`` for Chinese text: it pads text to a width in columns, not characters, so rows line up;
    and it drops the space a translation puts between a field and Chinese ("{name} 的形状", right for a
    name in code) when the field's value itself ends (or, before it, starts) with Chinese."""

    def vformat(self, format_string: str, args: object, kwargs: dict) -> str:
        pieces: list[str] = []
        for literal, name, spec, conversion in self.parse(format_string):
            if pieces and CJK.fullmatch(pieces[-1][-1:] or "x") and literal[:1] == " " and CJK.match(literal[1:2]):
                literal = literal[1:]  # the previous field's value ends in Chinese, and so does what follows
            if name is None:
                pieces.append(literal)
                continue
            value = self.format_field(self.convert_field(self.get_field(name, args, kwargs)[0], conversion), spec)
            if literal[-1:] == " " and CJK.match(literal[-2:-1]) and CJK.match(value[:1]):
                literal = literal[:-1]
            pieces += [literal, value]
        return "".join(pieces)

    def format_field(self, value: object, format_spec: str) -> str:
        aligned = ALIGNED.match(format_spec) if isinstance(value, str) else None
        if aligned is None:
            return super().format_field(value, format_spec)
        gap = max(0, int(aligned["width"]) - display_width(value))
        fill, align = aligned["fill"] or " ", aligned["align"] or "<"
        if align == ">":
            return fill * gap + value
        if align == "^":
            return fill * (gap // 2) + value + fill * (gap - gap // 2)
        return value + fill * gap


@cache
def catalog(language: str, locale: Path = LOCALE) -> dict[str, str]:
    """``{English: translation}`` from every ``.po`` file of ``language`` under ``locale`` (this package's, or the
    grader's or the hub's own); fuzzy and empty entries left out."""
    return translations_in(locale / language, language)


def translations_in(folder: Path, language: str) -> dict[str, str]:
    """``{English: translation}`` from every ``.po`` file in ``folder``; fuzzy and empty entries left out."""
    translations: dict[str, str] = {}
    for path in sorted(folder.glob("*.po")):
        with path.open("rb") as file:
            for message in read_po(file, locale=language):
                if message.id and isinstance(message.id, str) and message.string and not message.fuzzy:
                    translations[message.id] = message.string
    return translations


def tr(message: str, /, **fields: object) -> str:
    """``message`` in this run's language (:func:`tfcourse.language.edition`), its ``{fields}`` filled in."""
    language = edition()
    if language != ENGLISH:
        use_edition_font(language)  # the text may go on a figure
    return say(language, message, **fields)


def say(language: str, message: str, /, locale: Path = LOCALE, **fields: object) -> str:
    """``message`` in ``language``, from the catalogs under ``locale``, its ``{fields}`` filled in."""
    if language == ENGLISH:
        return message.format(**fields) if fields else message
    text = catalog(language, locale).get(message, message)
    return ColumnFormatter().format(text, **fields) if fields else text
