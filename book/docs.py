"""Build the documentation site: ``README.md`` and ``docs/*.md`` as static HTML pages, for reading offline.

    python book/docs.py [--output build/docs]

The README becomes ``index.html``, each ``docs/NAME.md`` becomes ``NAME.html``, and every page
carries the same navigation bar (the README, then the guides in ``PAGE_ORDER``, then any other
page of ``docs/``). Markdown is rendered by mistune (nbconvert's own Markdown library): tables,
code blocks and headings with GitHub's anchors, so that ``students.md#setting-up`` works as
it does on GitHub. Links between the pages become links between the HTML files; a link to any
other file of the repository points at that file, relative to the site. Nothing is loaded from
another host: the style sheet is inline and the pages have no script.
"""

import argparse
import html
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import mistune

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = REPO_ROOT / "docs"
README = REPO_ROOT / "README.md"
DEFAULT_OUTPUT = REPO_ROOT / "build" / "docs"
# The guides in the order a newcomer meets them; a page of docs/ not named here comes after them.
PAGE_ORDER = (
    "students",
    "syllabus",
    "syllabus.zh",
    "reader-edition",
    "editions",
    "instructors",
    "similarity",
    "running-a-class",
    "maintainers",
    "measurements",
)
STYLE = """
body { font-family: system-ui, sans-serif; line-height: 1.5; color: #1a1a1a; margin: 0; }
nav { background: #f3f4f6; border-bottom: 1px solid #d0d4da; padding: 0.6em 1em; }
nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.4em 1.4em; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: bold; color: #1a1a1a; }
main { max-width: 60em; margin: 0 auto; padding: 1em 1.5em 3em; }
a { color: #0b57d0; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.92em; }
pre { background: #f6f8fa; border: 1px solid #d0d4da; padding: 0.8em; overflow-x: auto; line-height: 1.3; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #d0d4da; padding: 0.3em 0.6em; vertical-align: top; text-align: left; }
th { background: #f3f4f6; }
"""


@dataclass(frozen=True)
class Page:
    """One page of the site: its Markdown file and the HTML file it becomes."""

    source: Path
    file_name: str

    @property
    def title(self) -> str:
        """The page's first heading, as plain text."""
        heading = next(line for line in self.source.read_text().splitlines() if line.startswith("# "))
        return heading[2:].strip()


def pages() -> list[Page]:
    """The README, then every page of ``docs/``: the guides of ``PAGE_ORDER`` first, the others by name."""
    order = {name: number for number, name in enumerate(PAGE_ORDER)}
    guides = sorted(DOCS.glob("*.md"), key=lambda path: (order.get(path.stem, len(order)), path.stem))
    return [Page(README, "index.html")] + [Page(path, f"{path.stem}.html") for path in guides]


def anchor(text: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    plain = re.sub(r"<[^>]+>", "", html.unescape(text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", plain).replace(" ", "-")


class DocsRenderer(mistune.HTMLRenderer):
    """mistune's HTML, with anchored headings and links rewritten from the repository to the site."""

    def __init__(self, page: Page, site_pages: dict[Path, str], output: Path):
        super().__init__(escape=False)
        self.page, self.site_pages, self.output = page, site_pages, output

    def heading(self, text: str, level: int, **attrs) -> str:
        return f'<h{level} id="{anchor(text)}">{text}</h{level}>\n'

    def codespan(self, text: str) -> str:
        return super().codespan(text.replace("\\|", "|"))  # a pipe escaped for a table cell

    def link(self, text: str, url: str, title: str | None = None) -> str:
        return super().link(text, self.site_url(url), title)

    def site_url(self, url: str) -> str:
        """A link of the Markdown, as the HTML page must write it."""
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not parts.path:
            return url  # another host, or an anchor on this page
        target = (self.page.source.parent / parts.path).resolve()
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        if target in self.site_pages:
            return self.site_pages[target] + fragment
        return Path(os.path.relpath(target, self.output.resolve())).as_posix() + fragment


def render(page: Page, site: list[Page], output: Path) -> str:
    """The HTML of one page, with the site's navigation bar."""
    site_pages = {p.source.resolve(): p.file_name for p in site}
    markdown = mistune.create_markdown(
        renderer=DocsRenderer(page, site_pages, output), plugins=["table", "strikethrough"]
    )
    body = markdown(page.source.read_text())
    current = ' aria-current="page"'
    links = "\n".join(
        f'<li><a href="{p.file_name}"{current if p == page else ""}>{html.escape(p.title)}</a></li>' for p in site
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(page.title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f'<nav aria-label="Documentation pages">\n<ul>\n{links}\n</ul>\n</nav>\n'
        f"<main>\n{body}</main>\n</body>\n</html>\n"
    )


def build(output: Path) -> list[Page]:
    """Write every page into ``output`` (created if missing); return the pages in site order."""
    output.mkdir(parents=True, exist_ok=True)
    site = pages()
    for page in site:
        (output / page.file_name).write_text(render(page, site, output))
    return site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="site folder")
    args = parser.parse_args(argv)
    site = build(args.output)
    print(f"documentation: {len(site)} pages, {args.output / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
