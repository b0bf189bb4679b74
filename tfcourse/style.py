"""The course's figure style: readable in greyscale and by colour-blind readers.

Applied when :mod:`tfcourse` is imported (every notebook does, in its setup cell):

- successive lines of an axes differ in line style as well as colour (solid, dash-dot,
  dash-dot-dot, ...), so no curve is told apart by its colour alone; their colours are Okabe and
  Ito's palette, distinct to the common forms of colour-blindness;
- images default to viridis, whose brightness grows with the value (the heatmaps of
  :mod:`tfcourse.plots` and the notebooks use viridis or cividis explicitly);
- in an edition whose entry in ``tfcourse/editions.toml`` names a font (the Chinese one: Noto Sans CJK SC, from
  the pinned ``noto-cjk-sans-otc`` package), Matplotlib draws each character it cannot find in DejaVu Sans
  from that font (last in ``font.family``): Latin text looks as in English,
  Chinese text has glyphs on any machine. English runs skip it (reading the font takes time: docs/measurements.md).
"""

import dataclasses
import importlib

import matplotlib as mpl
from cycler import cycler
from matplotlib import font_manager

from tfcourse.language import edition
from tfcourse.registry import editions

OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"]
# Solid, dash-dot, dash-dot-dot, long dash-dot first: the notebooks draw their reference lines
# (chance, uniform, a bound) dashed or dotted, and their prose names them so ("the dotted line").
LINE_STYLES = ["-", "-.", (0, (3, 1, 1, 1, 1, 1)), (0, (8, 2, 1, 2)), (0, (5, 1)), "--", ":", (0, (1, 3))]


def apply_course_style() -> None:
    mpl.rcParams["axes.prop_cycle"] = cycler(color=OKABE_ITO) + cycler(linestyle=LINE_STYLES)
    mpl.rcParams["image.cmap"] = "viridis"
    use_edition_font(edition())


def use_edition_font(language: str) -> None:
    """Draw the glyphs DejaVu Sans lacks from the font the edition names (:mod:`tfcourse.registry`), last in
    ``font.family``; nothing for an edition that names none, and at once when it is in use already.

    Also called by :func:`tfcourse.messages.tr` whenever it speaks a translated edition: a kernel forked from one
    that imported :mod:`tfcourse` in English (the grader's warm kernels) still gets the font before its first figure.
    """
    family, module = editions()[language].font, editions()[language].font_module
    if not family or mpl.rcParams["font.family"][-1:] == [family]:
        return
    font_path = importlib.import_module(module).FONT_PATH  # read only by the editions that need it
    if not any(font.name == family for font in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(str(font_path))
        # The package has the regular weight only: a bold title draws its glyphs in it, without a log line each time.
        regular = [font for font in font_manager.fontManager.ttflist if font.name == family]
        font_manager.fontManager.ttflist += [dataclasses.replace(font, weight=700) for font in regular]
    # Matplotlib falls back along font.family (a generic family such as sans-serif stands for one font).
    families = [name for name in mpl.rcParams["font.family"] if name not in {e.font for e in editions().values()}]
    mpl.rcParams["font.family"] = [*families, family]
