"""The course's figure style: readable in greyscale and by colour-blind readers.

Applied when :mod:`tfcourse` is imported (every notebook does, in its setup cell):

- successive lines of an axes differ in line style as well as colour (solid, dash-dot,
  dash-dot-dot, ...), so no curve is told apart by its colour alone; their colours are Okabe and
  Ito's palette, distinct to the common forms of colour-blindness;
- images default to viridis, whose brightness grows with the value (the heatmaps of
  :mod:`tfcourse.plots` and the notebooks use viridis or cividis explicitly).
"""

import matplotlib as mpl
from cycler import cycler

OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"]
# Solid, dash-dot, dash-dot-dot, long dash-dot first: the notebooks draw their reference lines
# (chance, uniform, a bound) dashed or dotted, and their prose names them so ("the dotted line").
LINE_STYLES = ["-", "-.", (0, (3, 1, 1, 1, 1, 1)), (0, (8, 2, 1, 2)), (0, (5, 1)), "--", ":", (0, (1, 3))]


def apply_course_style() -> None:
    mpl.rcParams["axes.prop_cycle"] = cycler(color=OKABE_ITO) + cycler(linestyle=LINE_STYLES)
    mpl.rcParams["image.cmap"] = "viridis"
