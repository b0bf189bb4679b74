"""Alt text for the figures of an executed reader copy, in the page's language.

Each figure's alt text says what it shows, from the figure itself (titles, labels, legend, colour bar, read as the
kernel displays it: :mod:`tfcourse.figure_text`) and from the prose: the first sentence of the Markdown cell after
the figure's cell, or, when that cell opens a new section, the last sentence of the cell before it that speaks of
a figure, plot, curve or heatmap; the Chinese page takes the same cell's Chinese text. A code cell's metadata can
state the sentence itself (``{"reader": {"alt": {"en": ..., CODE: ...}}}``). ``set_alt_text`` writes it into each
PNG output's metadata (``image/png.alt``), which the reader template puts in the ``<img alt>``.
"""

import re

from nbformat import NotebookNode

from editions.translations import interface
from tfcourse.figure_text import parse
from tfcourse.registry import editions


def rules(language: str) -> dict:
    """How the edition's prose is read and its figures described (``editions/<code>/interface.yaml``)."""
    return interface(language)["alt_text"]


TEX_SYMBOLS = {
    "times": "×", "approx": "≈", "cdot": "·", "top": "ᵀ", "sqrt": "√", "pi": "π", "infty": "∞", "le": "≤",
    "ge": "≥", "ldots": "…", "sum": "Σ", "alpha": "α", "delta": "δ", "theta": "θ", "lambda": "λ", "omega": "ω",
    "mathrm": "", "text": "", "mathbb": "", "left": "", "right": "",
}


def tex_words(text: str) -> str:
    """TeX as plain characters: ``$QK^\\top/\\sqrt{d_k}$`` -> ``QKᵀ/√d_k``."""
    text = re.sub(r"\\([A-Za-z]+)\s?", lambda m: TEX_SYMBOLS.get(m.group(1), m.group(1)), text.replace("$", ""))
    return re.sub(r"[{}]|\^(?=ᵀ)|\\[!,;]", "", text)


def plain(markdown: str) -> str:
    """Markdown as plain words: maths kept as its TeX, emphasis, code ticks, links and tags dropped."""
    text = re.sub(r"\$\$?([^$]+)\$\$?", r"\1", markdown)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>|[`*]{1,3}(?=\S)|(?<=\S)[`*]{1,3}", "", text)
    return " ".join(text.split())


def sentences(markdown: str, language: str) -> list[str]:
    paragraphs = [p for p in re.split(r"\n\s*\n", markdown) if p.strip() and not p.lstrip().startswith(("#", "|"))]
    return [s.strip() for p in paragraphs for s in re.split(rules(language)["sentence_end"], plain(p)) if s.strip()]


def prose_sentence(cells: list[NotebookNode], index: int, language: str) -> str:
    """The sentence the notebook's prose says about the figure made by ``cells[index]``."""
    after = next((c for c in cells[index + 1 :] if c.cell_type == "markdown"), None)
    if after is not None and not after.source.lstrip().startswith("#"):
        found = sentences(after.source, language)
        if found:
            short = len(found[0]) < rules(language)["shortest_sentence"] and len(found) > 1
            return editions()[language].join.join(found[:2]) if short else found[0]
    before = next((c for c in reversed(cells[:index]) if c.cell_type == "markdown"), None)
    if before is not None:
        figure = rules(language)["speaks_of_a_figure"]
        speaking = [s for s in sentences(before.source, language) if re.search(figure, s)]
        if speaking:
            return speaking[-1]
    return ""


def figure_words(described: dict, language: str) -> str:
    """The figure's own words (title, panels, axes, legend, colour bar) as one sentence."""
    say, panels = rules(language)["words"], described.get("axes", [])
    title = described.get("title") or next((a["title"] for a in panels if a.get("title")), "")
    shared = {key: panels[0].get(key) for key in ("x", "y") if len(panels) > 1}
    shared = {key: label for key, label in shared.items() if label and all(a.get(key) == label for a in panels)}
    parts = []
    for axes in panels:
        bits = [f"{say['panel']} “{axes['title']}”"] if axes.get("title") and axes["title"] != title else []
        bits += [f"{say[key]}{say['colon']}{axes[key]}" for key in ("x", "y") if axes.get(key) and key not in shared]
        if axes.get("legend"):
            bits.append(say["legend"] + say["colon"] + say["comma"].join(axes["legend"]))
        parts.append(say["comma"].join(bits))
    if shared:
        parts.append(say["all"] + say["colon"] + say["comma"].join(f"{say[k]} {label}" for k, label in shared.items()))
    parts += [f"{say['bar']}{say['colon']}{label}" for label in described.get("colorbars", [])]
    head = f"{say['figure']}{say['colon']}{title}" if title else say["figure"]
    body = say["sep"].join(p for p in parts if p)
    return tex_words(head + say["end"] + (body + say["end"] if body else ""))


def set_alt_text(notebook: NotebookNode, language: str) -> int:
    """Give every PNG output of the executed notebook its alt text; return how many were given one."""
    given = 0
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" not in data:
                continue
            described = parse(output) or {}
            # A cell may say it itself (metadata reader.alt.<language>), in place of the prose sentence.
            own = cell.metadata.get("reader", {}).get("alt", {}).get(language)
            sentence = own or prose_sentence(notebook.cells, index, language)
            alt = tex_words(figure_words(described, language) + sentence).strip()
            output.setdefault("metadata", {}).setdefault("image/png", {})["alt"] = alt
            given += 1
    return given
