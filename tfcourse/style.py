"""The course's figure style: readable in greyscale and by colour-blind readers.

Applied when :mod:`tfcourse` is imported (every notebook does, in its setup cell):

- successive lines of an axes differ in line style as well as colour (solid, dash-dot,
  dash-dot-dot, ...), so no curve is told apart by its colour alone; their colours are Okabe and
  Ito's palette, distinct to the common forms of colour-blindness;
- images default to viridis, whose brightness grows with the value (the heatmaps of
  :mod:`tfcourse.plots` and the notebooks use viridis or cividis explicitly);
- in the Chinese edition, Matplotlib draws each character it cannot find in DejaVu Sans from
  Noto Sans CJK SC (the pinned ``noto-cjk-sans-otc`` package, last in ``font.family``): Latin text looks as in English,
  Chinese text has glyphs on any machine. English runs skip it (reading the font takes time: docs/measurements.md).
"""

import dataclasses

import matplotlib as mpl
from cycler import cycler
from matplotlib import font_manager

from tfcourse.language import ENGLISH, edition

CJK_FAMILY = "Noto Sans CJK SC"

OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"]
# Solid, dash-dot, dash-dot-dot, long dash-dot first: the notebooks draw their reference lines
# (chance, uniform, a bound) dashed or dotted, and their prose names them so ("the dotted line").
LINE_STYLES = ["-", "-.", (0, (3, 1, 1, 1, 1, 1)), (0, (8, 2, 1, 2)), (0, (5, 1)), "--", ":", (0, (1, 3))]


def apply_course_style() -> None:
    mpl.rcParams["axes.prop_cycle"] = cycler(color=OKABE_ITO) + cycler(linestyle=LINE_STYLES)
    mpl.rcParams["image.cmap"] = "viridis"
    if edition() != ENGLISH:
        use_cjk_font()


def use_cjk_font() -> None:
    """Draw the glyphs DejaVu Sans lacks (Chinese) from Noto Sans CJK SC; at once when it is in use already.

    Also called by :func:`tfcourse.messages.tr` whenever it speaks Chinese: a kernel forked from one that
    imported :mod:`tfcourse` in English (the grader's warm kernels) still gets the font before its first figure.
    """
    if mpl.rcParams["font.family"][-1:] == [CJK_FAMILY]:
        return
    from noto_cjk_sans_otc import FONT_PATH  # noqa: PLC0415 (only the Chinese edition reads the font)

    if not any(font.name == CJK_FAMILY for font in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(str(FONT_PATH))
        # The package has the regular weight only: a bold title draws its Chinese in it, without a log line each time.
        regular = [font for font in font_manager.fontManager.ttflist if font.name == CJK_FAMILY]
        font_manager.fontManager.ttflist += [dataclasses.replace(font, weight=700) for font in regular]
    # Matplotlib falls back along font.family (a generic family such as sans-serif stands for one font).
    families = [name for name in mpl.rcParams["font.family"] if name != CJK_FAMILY]
    mpl.rcParams["font.family"] = [*families, CJK_FAMILY]
