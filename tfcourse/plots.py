"""Figures used across the notebooks. Each function returns its ``Figure``.

Every figure has a title, labelled axes and, where colour encodes a number, a
colour bar, so that it can be read on its own.
"""

import textwrap
from collections.abc import Sequence

import matplotlib.pyplot as plt
import seaborn as sns
import torch
from matplotlib.figure import Figure

from tfcourse.messages import tr


def _as_grid(values: torch.Tensor) -> "torch.Tensor":
    if values.dim() != 2:
        raise ValueError(f"expected a 2-D (rows, columns) tensor, got shape {tuple(values.shape)}")
    return values.detach().to("cpu", torch.float32)


def attention_heatmap(
    weights: torch.Tensor,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    title: str = "Attention weights",
    annotate: bool | None = None,
) -> Figure:
    """Heatmap of one attention matrix ``(Lq, Lk)``: rows are queries, columns keys.

    Numbers are written in the cells when the matrix is small enough to read them.
    """
    grid = _as_grid(weights)
    rows, columns = grid.shape
    if annotate is None:
        annotate = rows * columns <= 100
    fig, ax = plt.subplots(figsize=(1.0 + 0.6 * columns, 0.8 + 0.5 * rows))
    sns.heatmap(
        grid.numpy(),
        ax=ax,
        vmin=0.0,
        vmax=1.0,
        cmap="viridis",
        annot=annotate,
        fmt=".2f",
        square=True,
        xticklabels=list(key_labels) if key_labels is not None else "auto",
        yticklabels=list(query_labels) if query_labels is not None else "auto",
        cbar_kws={"label": tr("attention weight")},
    )
    ax.set_xlabel(tr("key (attended to)"))
    ax.set_ylabel(tr("query (attending)"))
    ax.set_title(tr(title))
    ax.tick_params(axis="x", labelrotation=45)
    ax.tick_params(axis="y", labelrotation=0)
    fig.tight_layout()
    return fig


def mask_image(
    mask: torch.Tensor,
    title: str,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
) -> Figure:
    """Picture of a boolean mask ``(Lq, Lk)``: True (may attend) light, False (blocked) dark."""
    grid = _as_grid(mask.bool())
    width = 1.0 + 0.5 * grid.shape[1]
    fig, ax = plt.subplots(figsize=(width, 0.8 + 0.45 * grid.shape[0]))
    sns.heatmap(
        grid.numpy(),
        ax=ax,
        vmin=0.0,
        vmax=1.0,
        cmap=sns.color_palette(["#2d2d2d", "#f2c14e"], as_cmap=True),
        linewidths=0.5,
        linecolor="white",
        square=True,
        xticklabels=list(key_labels) if key_labels is not None else "auto",
        yticklabels=list(query_labels) if query_labels is not None else "auto",
        cbar_kws={"label": tr("may attend (1 = True)"), "ticks": [0, 1]},
    )
    ax.set_xlabel(tr("key position"))
    ax.set_ylabel(tr("query position"))
    # Wrapped to the width of the grid, so a long title never runs into the colour bar.
    ax.set_title(textwrap.fill(tr(title), width=max(16, int(4.5 * (width - 1.0)))))
    ax.tick_params(axis="y", labelrotation=0)
    fig.tight_layout()
    return fig
