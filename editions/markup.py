"""What a translation must carry over from the English untouched: formulas, code, links and markers.

:func:`markup_counts` counts each kind in one Markdown cell; :func:`prose` is the cell with all of
them cut out, the text a translator actually translates (what the glossary check reads).
"""

import re
from collections import Counter

FENCED_CODE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
DISPLAY_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$", re.S)
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)((?:\\.|[^$\\])+?)(?<!\\)\$")
MARKDOWN_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]*(?:\([^()]*\)[^()\s]*)*)(?:\s+\"[^\"]*\")?\)")
HTML_LINK = re.compile(r"<a\s[^>]*href\s*=\s*[\"']([^\"']*)[\"']", re.I)
BARE_URL = re.compile(r"<(https?://[^>\s]+)>")
PLAIN_URL = re.compile(r"https?://[^\s)>\]]+")
HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
ANSWER_MARKER = "YOUR ANSWER HERE"
HINT = re.compile(r"<details>")
HEADING = re.compile(r"^#{1,6}[ \t]", re.M)

KINDS = ("formulas", "code spans", "code blocks", "links", "answer markers", "hints", "headings")


def _without(pattern: re.Pattern, text: str) -> tuple[str, int]:
    return pattern.subn(" ", text)


def markup_counts(text: str) -> Counter:
    """How many of each kind of :data:`KINDS` the Markdown ``text`` holds (code is cut out before maths)."""
    counts = Counter()
    counts["answer markers"] = text.count(ANSWER_MARKER)
    counts["hints"] = len(HINT.findall(text))
    text, counts["code blocks"] = _without(FENCED_CODE, text)
    counts["headings"] = len(HEADING.findall(text))
    text, counts["code spans"] = _without(CODE_SPAN, text)
    text, display = _without(DISPLAY_MATH, text)
    text, inline = _without(INLINE_MATH, text)
    counts["formulas"] = display + inline
    counts["links"] = len(MARKDOWN_LINK.findall(text)) + len(HTML_LINK.findall(text)) + len(BARE_URL.findall(text))
    return counts


def prose(text: str) -> str:
    """The words a translator translates: code, maths, links (their text is mostly a paper's or a
    page's title, kept in English) and HTML tags replaced by spaces."""
    for pattern in (FENCED_CODE, CODE_SPAN, DISPLAY_MATH, INLINE_MATH, MARKDOWN_LINK):
        text = pattern.sub(" ", text)
    text = PLAIN_URL.sub(" ", BARE_URL.sub(" ", text))
    return HTML_TAG.sub(" ", text)


def differences(english: str, translated: str) -> dict[str, tuple[int, int]]:
    """Kind -> (English count, translated count), for each kind whose counts differ."""
    en, zh = markup_counts(english), markup_counts(translated)
    return {kind: (en[kind], zh[kind]) for kind in KINDS if en[kind] != zh[kind]}
