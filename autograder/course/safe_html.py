"""The HTML of a student's notebook as formgrader shows it to the instructor: markup without anything active.

nbconvert's own ``clean_html`` (its ``sanitize_html`` option) keeps only bleach's short default list of tags and
escapes the rest, so a Markdown heading or table would show as literal tags. This filter replaces it in the
formgrader's exporter (``HTMLExporter.filters``, autograder/course/settings.py): it keeps what Markdown and
notebook outputs draw (headings, paragraphs, lists, tables, images, code, maths as text) and drops every tag
that runs or loads (script, style, iframe, object, embed, form, meta, base, link, svg: what they enclosed stays
as inert text), every event handler and ``style`` attribute, comments, and any link or image address that is
not http(s), mailto, a raster data image or relative. The page's Content-Security-Policy (page_policy.py)
stops scripts a second time, should anything slip through here.
"""

import bleach

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "s", "samp",
    "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
    "u", "ul",
})
ATTRIBUTES = {
    "*": ["class", "id", "title", "align"],
    "a": ["href", "name"],
    "img": ["src", "alt", "width", "height"],
    "td": ["colspan", "rowspan"],
    "th": ["colspan", "rowspan", "scope"],
    "ol": ["start"],
}
PROTOCOLS = frozenset({"http", "https", "mailto", "data"})
DATA_IMAGE_PREFIXES = ("data:image/png", "data:image/jpeg", "data:image/gif", "data:image/webp")


def allowed_attribute(tag: str, name: str, value: str) -> bool:
    """An attribute the page may keep: listed for the tag, and a ``data:`` address only as a raster image."""
    if name not in ATTRIBUTES.get(tag, []) and name not in ATTRIBUTES["*"]:
        return False
    if name in {"href", "src"} and value.strip().lower().startswith("data:"):
        return tag == "img" and value.strip().lower().startswith(DATA_IMAGE_PREFIXES)
    return True


CLEANER = bleach.Cleaner(
    tags=TAGS, attributes=allowed_attribute, protocols=PROTOCOLS, strip=True, strip_comments=True
)


def safe_html(html: str | bytes) -> str:
    """``html`` with only inert markup left (see the module's docstring)."""
    return CLEANER.clean(html.decode() if isinstance(html, bytes) else str(html))
