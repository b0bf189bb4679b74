"""Block diagrams of the Transformer: where the LayerNorms sit in Post-LN and in Pre-LN.

``architecture_figure()`` draws the encoder stack in both arrangements side by side;
``architecture_figure(decoder=True)`` puts the decoder stack beside each encoder, its
cross-attention fed by the encoder's output (the memory). Everything is drawn with
matplotlib boxes and arrows.

The layout is data first: ``stack_blocks`` lists a stack's blocks bottom to top (the order
in which they run), and the drawing only places them. Each box carries its block's kind as
its ``gid`` ("norm", "attention", ...), so a test can find the LayerNorms in the figure.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

from tfcourse.messages import tr

Kind = Literal["input", "embed", "attention", "cross", "ffn", "add", "norm", "linear", "output"]
Part = Literal["encoder", "decoder"]

COLOURS = {
    "embed": "#c7e9c0",
    "attention": "#fdd0a2",
    "cross": "#fcae91",
    "ffn": "#c6dbef",
    "norm": "#ffe066",
    "linear": "#d9d9d9",
    "add": "white",
}
BOX_WIDTH, BOX_HEIGHT, ADD_RADIUS, Y_STEP = 2.7, 0.66, 0.2, 1.1  # data units
FONT_SIZE = 10


@dataclass(frozen=True)
class Block:
    """One box of a diagram. ``in_layer``: inside the repeated layer (drawn in the "x N" frame)."""

    kind: Kind
    text: str
    in_layer: bool = False


def _sublayers(part: Part) -> list[Block]:
    if part == "encoder":
        return [Block("attention", "Multi-head\nself-attention", True), Block("ffn", "Feed-forward", True)]
    return [
        Block("attention", "Masked multi-head\nself-attention", True),
        Block("cross", "Multi-head\ncross-attention", True),
        Block("ffn", "Feed-forward", True),
    ]


def layer_blocks(part: Part, norm_first: bool) -> list[Block]:
    """The blocks of one encoder or decoder layer, bottom to top.

    Post-LN (``norm_first=False``): sublayer, residual add, LayerNorm, for each sublayer.
    Pre-LN (``norm_first=True``): LayerNorm, sublayer, residual add: the stream itself is
    never normalised inside the layer.
    """
    norm, add = Block("norm", "LayerNorm", True), Block("add", "+", True)
    blocks = []
    for sublayer in _sublayers(part):
        blocks += [norm, sublayer, add] if norm_first else [sublayer, add, norm]
    return blocks


def stack_blocks(part: Part, norm_first: bool, with_decoder: bool = False) -> list[Block]:
    """A whole stack bottom to top: ids, embedding, one layer (repeated N times), its top.

    ``with_decoder``: the encoder of an encoder-decoder, whose output is the decoder's memory.
    """
    if part == "encoder" and with_decoder:
        source, top = Block("input", "source ids (B, S)"), Block("output", "memory (B, S, d)")
    elif part == "encoder":
        source, top = Block("input", "ids (B, L)"), Block("output", "hidden (B, L, d)")
    else:
        source = Block("input", "target ids (B, T),\nshifted right")
    blocks = [source, Block("embed", "Embedding × √d\n+ positions")]
    blocks += layer_blocks(part, norm_first)
    if norm_first:
        blocks.append(Block("norm", "Final LayerNorm"))
    if part == "encoder":
        blocks.append(top)
    else:
        blocks += [Block("linear", "Linear"), Block("output", "logits (B, T, V)")]
    return blocks


@dataclass
class _Placed:
    block: Block
    x: float
    y: float

    @property
    def half_height(self) -> float:
        return {"add": ADD_RADIUS, "input": 0.3, "output": 0.2}.get(self.block.kind, BOX_HEIGHT / 2)

    @property
    def top(self) -> float:
        return self.y + self.half_height

    @property
    def bottom(self) -> float:
        return self.y - self.half_height


def _arrow(ax: Axes, points: list[tuple[float, float]], colour: str = "black") -> None:
    """A polyline through ``points`` with an arrow head at the last one."""
    xs, ys = zip(*points, strict=True)
    if len(points) > 2:
        ax.plot(xs[:-1], ys[:-1], color=colour, linewidth=1.3, solid_capstyle="butt", zorder=2)
    ax.add_patch(
        FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>", mutation_scale=12, color=colour, linewidth=1.3,
                        shrinkA=0, shrinkB=0, zorder=2)
    )


def _draw_block(ax: Axes, placed: _Placed) -> None:
    block, x, y = placed.block, placed.x, placed.y
    if block.kind in ("input", "output"):
        ax.text(x, y, tr(block.text), ha="center", va="center", fontsize=FONT_SIZE, style="italic")
        return
    if block.kind == "add":
        circle = Circle((x, y), ADD_RADIUS, facecolor=COLOURS["add"], edgecolor="black", linewidth=1.2, zorder=3)
        circle.set_gid("add")
        ax.add_patch(circle)
        ax.text(x, y, "+", ha="center", va="center_baseline", fontsize=FONT_SIZE + 2, zorder=4)
        return
    is_norm = block.kind == "norm"
    box = FancyBboxPatch(
        (x - BOX_WIDTH / 2, y - BOX_HEIGHT / 2),
        BOX_WIDTH,
        BOX_HEIGHT,
        boxstyle="round,pad=0,rounding_size=0.12",
        facecolor=COLOURS[block.kind],
        edgecolor="#b8860b" if is_norm else "black",
        linewidth=2.4 if is_norm else 1.0,
        zorder=3,
    )
    box.set_gid(block.kind)
    ax.add_patch(box)
    ax.text(x, y, tr(block.text), ha="center", va="center", fontsize=FONT_SIZE, zorder=4,
            fontweight="bold" if is_norm else "normal")


def _draw_stack(ax: Axes, part: Part, norm_first: bool, decoder: bool, x: float, side: int) -> list[_Placed]:
    """Draw one stack centred on ``x``; the residual lanes and "× N" go on ``side`` (-1 left, +1 right)."""
    blocks = stack_blocks(part, norm_first, with_decoder=decoder)
    placed = [_Placed(block, x, index * Y_STEP) for index, block in enumerate(blocks)]
    for block in placed:
        _draw_block(ax, block)
    for below, above in zip(placed, placed[1:], strict=False):
        _arrow(ax, [(x, below.top), (x, above.bottom)])

    # Residual connections: from the stream just below each sublayer group to its "+".
    lane = x + side * (BOX_WIDTH / 2 + 0.3)
    for index, item in enumerate(placed):
        if item.block.kind != "add":
            continue
        start = index - (2 if norm_first else 1)  # the first block of this sublayer group
        branch_y = (placed[start - 1].top + placed[start].bottom) / 2
        _arrow(ax, [(x, branch_y), (lane, branch_y), (lane, item.y), (x + side * ADD_RADIUS, item.y)], "#555555")

    # The frame of the repeated layer, with "× N" outside it.
    layer = [item for item in placed if item.block.in_layer]
    low, high = layer[0].bottom - 0.3, layer[-1].top + 0.2
    half_width = BOX_WIDTH / 2 + 0.55
    frame = FancyBboxPatch(
        (x - half_width, low), 2 * half_width, high - low, boxstyle="round,pad=0,rounding_size=0.2",
        facecolor="#f4f4f4", edgecolor="#888888", linewidth=1.0, zorder=1,
    )
    frame.set_gid("layer")
    ax.add_patch(frame)
    ax.text(x + side * (half_width + 0.15), (low + high) / 2, "× N", ha="left" if side > 0 else "right",
            va="center", fontsize=FONT_SIZE + 2, fontweight="bold")
    heading = tr("Encoder") if part == "encoder" else tr("Decoder")
    ax.text(x, placed[-1].top + 0.7, heading, ha="center", va="center", fontsize=FONT_SIZE + 2, fontweight="bold")
    return placed


def _draw_panel(ax: Axes, norm_first: bool, decoder: bool) -> None:
    margin = BOX_WIDTH / 2 + 1.35  # room for the frame and "× N"
    encoder = _draw_stack(ax, "encoder", norm_first, decoder, x=0.0, side=-1)
    top, right = encoder[-1].top + 1.0, margin
    if decoder:
        gap = BOX_WIDTH + 2.4
        stack = _draw_stack(ax, "decoder", norm_first, decoder, x=gap, side=+1)
        memory = encoder[-1]
        cross = next(item for item in stack if item.block.kind == "cross")
        turn = gap / 2
        _arrow(ax, [(0.0, memory.top), (0.0, memory.top + 0.2), (turn, memory.top + 0.2), (turn, cross.y),
                    (gap - BOX_WIDTH / 2, cross.y)], "#c0392b")
        ax.text(turn + 0.12, cross.y + 0.15, tr("keys and\nvalues"), ha="left", va="bottom", fontsize=FONT_SIZE - 1,
                color="#c0392b")
        top, right = stack[-1].top + 1.0, gap + margin
    ax.set_xlim(-margin, right)
    ax.set_ylim(-0.7, top)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    name = "Pre-LN (norm_first=True)" if norm_first else "Post-LN (norm_first=False)"
    used_by = tr("GPT-2 and most models since") if norm_first else tr("the 2017 paper, BERT")
    ax.set_title(f"{name}\n{used_by}", fontsize=FONT_SIZE + 2)
    caption = (
        tr("LayerNorm on each sublayer's input,\nand one final LayerNorm per stack")
        if norm_first
        else tr("LayerNorm after each residual addition")
    )
    ax.set_xlabel(caption, fontsize=FONT_SIZE + 1)
    ax.set_ylabel(tr("order of computation (bottom to top)"), fontsize=FONT_SIZE)


def architecture_figure(decoder: bool = False, arrangements: Sequence[bool] = (False, True)) -> Figure:
    """One panel per arrangement (``norm_first`` False: Post-LN, True: Pre-LN), side by side.

    Each panel draws the encoder stack, and with ``decoder=True`` the decoder stack beside it.
    Yellow boxes with a thick border are the LayerNorms; grey arrows are the residual
    connections; the grey frame marked "× N" is the layer that a stack repeats.
    """
    if not arrangements:
        raise ValueError("arrangements: give at least one norm_first value")
    width = (8.8 if decoder else 4.4) * len(arrangements)
    fig, axes = plt.subplots(1, len(arrangements), figsize=(width, 10.0 if decoder else 7.2), squeeze=False,
                             layout="constrained")
    for ax, norm_first in zip(axes[0], arrangements, strict=True):
        _draw_panel(ax, norm_first, decoder)
    title = (
        tr("The Transformer's encoder and decoder: where the LayerNorms sit")
        if decoder
        else tr("The Transformer encoder: where the LayerNorms sit")
    )
    fig.suptitle(title, fontsize=FONT_SIZE + 3, fontweight="bold")
    return fig
