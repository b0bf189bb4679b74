"""The architecture diagram of notebooks 04 and 05 (tfcourse.architecture)."""

import matplotlib
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from tfcourse import architecture

matplotlib.use("Agg")


def boxes(axes, gid: str) -> list[Patch]:
    return [patch for patch in axes.patches if patch.get_gid() == gid]


def centre_y(patch: Patch) -> float:
    box = patch.get_path().get_extents(patch.get_patch_transform())
    return (box.y0 + box.y1) / 2


@pytest.mark.parametrize("decoder", [False, True])
def test_the_figure_has_a_title_and_one_titled_labelled_panel_per_arrangement(decoder):
    figure = architecture.architecture_figure(decoder=decoder)
    assert isinstance(figure, Figure)
    assert "LayerNorm" in figure.get_suptitle()
    post, pre = figure.axes
    assert post.get_title().startswith("Post-LN") and pre.get_title().startswith("Pre-LN")
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in figure.axes)
    assert len(boxes(post, "cross")) == (1 if decoder else 0)


def test_one_arrangement_alone():
    (panel,) = architecture.architecture_figure(decoder=True, arrangements=(True,)).axes
    assert panel.get_title().startswith("Pre-LN")
    with pytest.raises(ValueError, match="at least one"):
        architecture.architecture_figure(arrangements=())


@pytest.mark.parametrize("part", ["encoder", "decoder"])
def test_the_layer_blocks_put_the_norm_after_the_addition_in_post_ln_and_before_the_sublayer_in_pre_ln(part):
    sublayers = 2 if part == "encoder" else 3
    post = [block.kind for block in architecture.layer_blocks(part, norm_first=False)]
    pre = [block.kind for block in architecture.layer_blocks(part, norm_first=True)]
    assert post[1:3] == ["add", "norm"] and post.count("norm") == sublayers
    assert pre[0:3] == ["norm", "attention", "add"] and pre.count("norm") == sublayers
    stack_post = [block.kind for block in architecture.stack_blocks(part, norm_first=False)]
    stack_pre = [block.kind for block in architecture.stack_blocks(part, norm_first=True)]
    assert stack_pre.count("norm") == stack_post.count("norm") + 1, "Pre-LN adds one final LayerNorm per stack"


def test_the_drawn_norm_boxes_sit_where_each_arrangement_puts_them():
    post, pre = architecture.architecture_figure().axes
    for panel, norm_first in [(post, False), (pre, True)]:
        attention = centre_y(boxes(panel, "attention")[0])
        lowest_norm = min(centre_y(norm) for norm in boxes(panel, "norm"))
        first_add = min(centre_y(add) for add in boxes(panel, "add"))
        if norm_first:  # the first LayerNorm feeds the attention: below it
            assert lowest_norm < attention < first_add
        else:  # the first LayerNorm follows the residual addition: above both
            assert attention < first_add < lowest_norm
    assert len(boxes(pre, "norm")) == len(boxes(post, "norm")) + 1
