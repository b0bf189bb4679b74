"""The reader edition's own words (navigation, labels, the index page), per language.

English is at ``build/book/``, each translated edition in the folder ``tfcourse/editions.toml`` names
(``build/book/zh/``), in the words of its ``editions/<code>/interface.yaml``; each page links to the same
page in the other language and to the student notebook of its own edition's release.
"""

from dataclasses import dataclass

from editions.translations import interface
from tfcourse.registry import editions, source, translated


@dataclass(frozen=True)
class Words:
    language: str
    folder: str  # the site's subfolder for this language ("" for English)
    release: str  # the student release the pages link to
    course: str
    contents: str
    nav_top: str
    nav_bottom: str
    other_language: str  # the link to the other language's page, in that language
    run_it: str
    student_notebook: str
    run_it_text: str
    shows: str
    fast_mode: str
    reference_answer: str
    visible_tests: str
    model_answer: str
    index_heading: str
    index_text: str
    index_contents: str
    mode_fast: str
    mode_full: str





def edition_words(code: str) -> Words:
    """An edition's words: English, with what ``editions/<code>/interface.yaml`` translates."""
    edition, other = editions()[code], editions()[source() if code != source() else translated()[0]]
    place = {"language": code, "folder": edition.book, "release": edition.release, "other_language": other.name}
    return Words(**place, **interface(code)["book"])


LANGUAGES = {code: edition_words(code) for code in editions()}
EN = LANGUAGES[source()]


def other(words: Words) -> Words:
    """The language each page links to: English from a translation, the first translation from English."""
    return LANGUAGES[source() if words.language != source() else translated()[0]]


def link_to_other_language(words: Words, file_name: str) -> str:
    """The same page in the other language, relative to this page."""
    return f"../{file_name}" if words.folder else f"{other(words).folder}/{file_name}"
