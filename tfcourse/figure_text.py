"""What a figure shows, in words, read from the figure itself: for alt text in the reader edition.

``describe(fig)`` returns the figure's title, and per axes its title, axis labels, legend entries
and colour-bar label. ``install()`` (run by ``book/build.py`` in the kernel that executes a
notebook, before its first cell) makes IPython add that description to every displayed figure's
output, as ``FIGURE_MIME`` beside the PNG; the book turns it into the
image's alt text in the page's language. Nothing changes for a student's own kernel.
"""

from matplotlib.figure import Figure

FIGURE_MIME = "application/vnd.tfcourse.figure+json"


def _text(artist) -> str:
    return " ".join(artist.get_text().split()) if artist is not None else ""


def describe(fig: Figure) -> dict:
    """``{"title", "axes": [{"title", "x", "y", "legend"}, ...], "colorbars"}``, empty parts left out."""
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    colorbars = {ax: _text(ax.yaxis.label) or _text(ax.xaxis.label) for ax in bars}
    axes = []
    for ax in fig.axes:
        if ax in colorbars or not ax.get_visible():
            continue
        legend = ax.get_legend()
        entry = {
            "title": _text(ax.title),
            "x": _text(ax.xaxis.label),
            "y": _text(ax.yaxis.label),
            "legend": [_text(t) for t in legend.get_texts()] if legend is not None else [],
        }
        axes.append({key: value for key, value in entry.items() if value})
    described = {"title": _text(fig._suptitle), "axes": axes, "colorbars": [c for c in colorbars.values() if c]}
    return {key: value for key, value in described.items() if value}


def install() -> None:
    """Give each figure displayed in this IPython kernel a ``FIGURE_MIME`` output: its description.

    A formatter of its own, which tests the object's class itself: switching on the inline backend
    removes every printer registered for ``Figure`` from IPython's formatters
    (``select_figure_formats``), so a ``for_type`` registration would not last.
    """
    from IPython import get_ipython
    from IPython.core.formatters import JSONFormatter

    class FigureDescription(JSONFormatter):
        format_type = FIGURE_MIME

        def __call__(self, obj):
            return describe(obj) if isinstance(obj, Figure) else None

    shell = get_ipython()
    if shell is not None:
        formatter = shell.display_formatter
        formatter.formatters[FIGURE_MIME] = FigureDescription(parent=formatter)
        if FIGURE_MIME not in formatter.active_types:
            formatter.active_types = [*formatter.active_types, FIGURE_MIME]


def parse(output: dict) -> dict | None:
    """The description a figure's display output carries (after :func:`install`), or None."""
    return output.get("data", {}).get(FIGURE_MIME)
