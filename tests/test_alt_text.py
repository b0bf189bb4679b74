"""Alt text for the reader edition's figures (book/alt_text.py, tfcourse/figure_text.py), without a kernel."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import nbformat

from book.alt_text import set_alt_text, tex_words
from tfcourse.figure_text import FIGURE_MIME, describe


def two_panel_figure():
    fig, (left, right) = plt.subplots(1, 2)
    left.plot([0, 1], label="scaled")
    left.plot([1, 0], label="unscaled")
    left.legend()
    image = right.imshow([[0.0, 1.0], [1.0, 0.0]])
    fig.colorbar(image, ax=right, label="attention weight")
    for ax, title in ((left, "Curves"), (right, "Weights")):
        ax.set_title(title)
        ax.set_xlabel("$d_k$")
        ax.set_ylabel("value")
    fig.suptitle("Two views")
    return fig


def test_a_figure_describes_its_title_panels_axes_legend_and_colour_bar():
    fig = two_panel_figure()
    try:
        assert describe(fig) == {
            "title": "Two views",
            "axes": [
                {"title": "Curves", "x": "$d_k$", "y": "value", "legend": ["scaled", "unscaled"]},
                {"title": "Weights", "x": "$d_k$", "y": "value"},
            ],
            "colorbars": ["attention weight"],
        }
    finally:
        plt.close(fig)


def notebook_with_a_figure(described: dict, after: str, cell_metadata: dict | None = None):
    figure = nbformat.v4.new_code_cell("plot()", metadata=cell_metadata or {})
    figure.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", FIGURE_MIME: described})
    ]
    cells = [nbformat.v4.new_markdown_cell("The figure below plots it."), figure, nbformat.v4.new_markdown_cell(after)]
    return nbformat.v4.new_notebook(cells=cells)


def alt_of(notebook) -> str:
    return notebook.cells[1].outputs[0].metadata["image/png"]["alt"]


def test_the_alt_text_is_the_figures_words_then_the_prose_sentence_in_the_page_language():
    fig = two_panel_figure()
    described = describe(fig)
    plt.close(fig)
    after = "Scaling keeps the curve flat for every width of the model. More text follows."
    english = notebook_with_a_figure(described, after)
    assert set_alt_text(english, "en") == 1
    assert alt_of(english) == (
        "Figure: Two views. panel “Curves”, lines: scaled, unscaled; panel “Weights”; "
        "every panel: x axis d_k, y axis value; colour scale: attention weight. "
        "Scaling keeps the curve flat for every width of the model."
    )
    chinese = notebook_with_a_figure(described, "缩放让曲线在模型的每种宽度下都保持平坦。后面还有别的话。")
    set_alt_text(chinese, "zh")
    assert alt_of(chinese).startswith("图：Two views。子图 “Curves”，图例：scaled，unscaled；")
    assert alt_of(chinese).endswith("色标：attention weight。缩放让曲线在模型的每种宽度下都保持平坦。")
    short = notebook_with_a_figure(described, "有三点值得注意。第一，对角线上是常数。第二，别的。")
    set_alt_text(short, "zh")
    assert alt_of(short).endswith("。有三点值得注意。第一，对角线上是常数。")


def test_a_new_section_after_the_figure_sends_the_alt_text_to_the_sentence_before_and_a_cell_can_say_its_own():
    notebook = notebook_with_a_figure({"title": "T"}, "## 3. Next section\n\nUnrelated.")
    set_alt_text(notebook, "en")
    assert alt_of(notebook) == "Figure: T. The figure below plots it."
    notebook = notebook_with_a_figure({"title": "T"}, "Anything.", {"reader": {"alt": {"en": "It rises."}}})
    set_alt_text(notebook, "en")
    assert alt_of(notebook) == "Figure: T. It rises."


def test_tex_becomes_readable_characters():
    assert tex_words(r"$QK^\top/\sqrt{d_k}$ and $2\times2$, $10000^{2/512} \approx 1.036$") == (
        "QKᵀ/√d_k and 2×2, 10000^2/512 ≈1.036"
    )
