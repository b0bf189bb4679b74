"""The class report's charts, each drawn with seaborn and described in words for its ``alt`` text.

A chart's description carries the numbers a reader would take from the picture (how many students,
out of how many points, the median, how many fell below half marks, the most failed tests), so the
page says the same to a screen reader as to the eye.
"""

import base64
import html
import io
from dataclasses import dataclass
from gettext import ngettext

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.ticker import MaxNLocator

from autograder.pipeline.storage.results import Status

HANDED_IN = "handed in"
MISSING = "missing (0 points)"
MOST_FAILED = 3  # tests named in the heatmap's description


@dataclass(frozen=True)
class Chart:
    figure: plt.Figure
    alt: str  # what the chart shows, in words, with its numbers


def students(count: int) -> str:
    return ngettext("{} student", "{} students", count).format(count)


def image_html(chart: Chart) -> str:
    """The chart as an inline PNG with its description as ``alt`` text (the figure is closed)."""
    buffer = io.BytesIO()
    chart.figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(chart.figure)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f"<img src='data:image/png;base64,{data}' alt=\"{html.escape(chart.alt, quote=True)}\">"


def score_histogram(assignment: str, rows: pd.DataFrame, out_of: float) -> Chart:
    """The autograded scores of one notebook's counted students (``rows``: its students' ``state``, ``counted``
    and ``score``, as :class:`~autograder.pipeline.commands.report_counts.ClassCounts` holds them)."""
    frame = rows[rows["counted"]]
    frame = frame.assign(who=[MISSING if s == Status.MISSING else HANDED_IN for s in frame["state"]])
    top = max(out_of, float(frame["score"].max()))
    figure, axis = plt.subplots(figsize=(5, 3.2))
    sns.histplot(frame, x="score", hue="who", hue_order=[HANDED_IN, MISSING], multiple="stack",
                 bins=list(range(int(top) + 2)), palette=["#4c72b0", "#c44e52"], ax=axis)
    axis.yaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set(title=f"{assignment}: {students(len(frame))}", xlabel=f"autograded score (out of {out_of:g})",
             ylabel="students")
    figure.tight_layout()
    missing, uncounted = int((frame["who"] == MISSING).sum()), int((~rows["counted"]).sum())
    below = int((frame["score"] < out_of / 2).sum())
    full = int((frame["score"] >= out_of).sum())
    alt = (f"Histogram of {assignment}'s autograded scores out of {out_of:g} for {students(len(frame))} "
           f"({missing} missing, counted as 0 points"
           + (f"; {uncounted} not counted, not yet handed in or not graded yet" if uncounted else "")
           + f"): median {frame['score'].median():g}, {below} below half marks ({out_of / 2:g}), "
           f"{full} with full marks.")
    return Chart(figure, alt)


def failure_heatmap(tests: pd.DataFrame) -> Chart:
    """The share of the counted students failing each test cell, one column per notebook."""
    counts = tests.groupby("assignment", sort=False)["student"].nunique()
    rates = tests.groupby(["assignment", "cell"], sort=False)["failed"].mean().unstack("assignment")
    labels = {a: f"{a}\n({students(n)})" for a, n in counts.items()}
    figure, axis = plt.subplots(figsize=(3 + 1.6 * rates.shape[1], 0.35 * len(rates) + 1.5))
    sns.heatmap(rates.rename(columns=labels), annot=True, fmt=".0%", cmap="Reds", vmin=0, vmax=1, ax=axis,
                cbar_kws={"label": "failed"})
    axis.set(title="Share of students failing each test", xlabel="", ylabel="test cell")
    figure.tight_layout()
    failed = tests.groupby(["assignment", "cell"], sort=False)["failed"].sum()
    failed = failed.sort_values(ascending=False, kind="stable")
    most = ", ".join(f"{a} {cell} {count / counts[a]:.0%} ({int(count)} of {counts[a]})"
                     for (a, cell), count in failed.head(MOST_FAILED).items() if count)
    sizes = ", ".join(f"{a}: {students(n)}" for a, n in counts.items())
    alt = (f"Heatmap of the share of students failing each of {len(rates)} test cells, one column per notebook "
           f"({sizes}; a missing student counts as failing every test). "
           + (f"Most failed: {most}." if most else "No test failed."))
    return Chart(figure, alt)
