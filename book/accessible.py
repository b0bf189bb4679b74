"""The reader edition's HTML made to pass axe-core: what nbconvert's lab template leaves out.

- a table header cell with no text (pandas leaves the index column's header empty) gets a label
  screen readers read and the page does not show;
- images whose alt text nbconvert filled with its "No description" placeholder are reported:
  :func:`placeholder_images` (the book gives every figure its own, ``book/alt_text.py``).
"""

from bs4 import BeautifulSoup

from editions.translations import interface

NBCONVERT_PLACEHOLDER = "No description has been provided for this image"
HIDDEN_LABEL_CLASS = "reader-visually-hidden"


def accessible_html(page: str, language: str = "en") -> str:
    soup = BeautifulSoup(page, "html.parser")
    for header in soup.select("th"):
        if not header.get_text(strip=True):
            label = soup.new_tag("span", attrs={"class": HIDDEN_LABEL_CLASS})
            label.string = interface(language)["index_label"]
            header.append(label)
    return str(soup)


def placeholder_images(page: str) -> int:
    return sum(1 for img in BeautifulSoup(page, "html.parser").select("img") if img.get("alt") == NBCONVERT_PLACEHOLDER)
