"""The reader edition's HTML made to pass axe-core: what nbconvert's lab template leaves out.

A table header cell with no text (pandas leaves the index column's header empty) gets a label screen readers
read and the page does not show. Every figure's alt text is the book's own (``book/alt_text.py``).
"""

from bs4 import BeautifulSoup

from editions.translations import interface

HIDDEN_LABEL_CLASS = "reader-visually-hidden"


def accessible_html(page: str, language: str = "en") -> str:
    soup = BeautifulSoup(page, "html.parser")
    for header in soup.select("th"):
        if not header.get_text(strip=True):
            label = soup.new_tag("span", attrs={"class": HIDDEN_LABEL_CLASS})
            label.string = interface(language)["index_label"]
            header.append(label)
    return str(soup)
