"""Notebook 06's "your own Transformer" (tfcourse.capstone) on a student's copy of the course laid out in a tmp dir.

The copy is the release notebooks of 01-05 filled with the reference answers, as a student who
solved everything would hand them in; then one answer is broken, left blank or its notebook removed.
"""

from pathlib import Path

import nbformat
import pytest
import torch
from torch import nn

from autograder.course import settings
from autograder.course.notebooks import fill_answers, reference_answers
from testbed.variants import VARIANTS
from tfcourse import capstone, reference, training
from tfcourse.modes import under_grader

CONFIG = {"d_model": 16, "num_heads": 4, "d_ff": 32, "num_layers": 2, "dropout": 0.1, "max_len": 32}


def lay_out(folder: Path, answers: dict[str, dict[str, str]]) -> Path:
    """Write the release of 01-05 filled with ``answers`` (per notebook) as a student's course folder."""
    for name in capstone.NOTEBOOKS:
        release = nbformat.read(settings.release_notebook(name), as_version=4)
        path = capstone.notebook_path(folder, name)
        path.parent.mkdir(parents=True)
        nbformat.write(fill_answers(release, answers.get(name, {})), path)
    return folder


@pytest.fixture(scope="module")
def solved() -> dict[str, dict[str, str]]:
    """The reference answers of 01-05, read from solutions/."""
    return {
        name: reference_answers(nbformat.read(settings.source_notebook(name), as_version=4))
        for name in capstone.NOTEBOOKS
    }


@pytest.fixture(scope="module")
def classifier_class() -> type[nn.Module]:
    """Notebook 06's TransformerClassifier (its reference answer), which the section assembles into."""
    module, errors = capstone.load_answers(settings.source_notebook("06_ag_news_classifier"))
    assert "classifier" not in errors and "masked_mean" not in errors, errors
    return module.TransformerClassifier


def outcome(parts: capstone.OwnParts, notebook: str, part: str) -> capstone.Outcome:
    return next(o for o in parts.outcomes if o.notebook == notebook and o.part == part)


def build_and_train(parts: capstone.OwnParts, classifier_class: type[nn.Module]) -> tuple[nn.Module, list[float]]:
    """The section's model, trained for three optimizer steps on random texts of 4 classes."""
    torch.manual_seed(0)
    model = capstone.assemble(classifier_class(50, num_classes=4, pad_idx=0, **CONFIG), parts, CONFIG)
    generator = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(3):
        ids = torch.randint(1, 50, (8, 12), generator=generator)
        ids[:4, 8:] = 0  # padding
        batches.append((ids, torch.randint(0, 4, (8,), generator=generator)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def loss_fn(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return nn.functional.cross_entropy(model(batch[0]), batch[1])

    return model, training.train(model, batches, loss_fn, optimizer, max_grad_norm=1.0, desc="test")


def test_the_reference_answers_pass_every_check_and_build_a_model_that_trains(tmp_path, solved, classifier_class):
    parts = capstone.load_own_parts(lay_out(tmp_path, solved), d_model=CONFIG["d_model"])
    assert all(o.passed for o in parts.outcomes), parts.table()
    assert [o.used for o in parts.outcomes if o.part != "DecoderLayer"] == ["yours"] * 5
    model, losses = build_and_train(parts, classifier_class)
    layer = model.layers[0].layer
    assert type(layer).__module__ == "student_04_encoder" and type(model.positions).__module__.startswith("student_03")
    assert type(layer.self_attn).__module__ == "student_02_multi_head_attention"
    assert parts.attention.__module__ == "student_01_attention"
    assert len(losses) == 3 and all(loss == loss for loss in losses)


def test_the_assembled_layers_start_from_the_reference_layers_weights(tmp_path, solved, classifier_class):
    parts = capstone.load_own_parts(lay_out(tmp_path, solved), d_model=CONFIG["d_model"])
    torch.manual_seed(0)
    original = classifier_class(50, **CONFIG).eval()
    torch.manual_seed(0)
    own = capstone.assemble(classifier_class(50, **CONFIG), parts, CONFIG).eval()
    x = torch.randn(2, 7, CONFIG["d_model"])
    with torch.no_grad():
        for theirs, ours in zip(original.layers, own.layers, strict=True):
            torch.testing.assert_close(ours(x), theirs(x), atol=1e-5, rtol=1e-5)


def test_a_wrong_multi_head_attention_is_named_with_its_check_and_replaced(tmp_path, solved, classifier_class):
    wrong_scale = next(v for v in VARIANTS["02_multi_head_attention"] if v.name == "own_attention_scaled_by_d_model")
    answers = {**solved, "02_multi_head_attention": dict(solved["02_multi_head_attention"])}
    answers["02_multi_head_attention"]["mha"] = wrong_scale.apply(solved["02_multi_head_attention"]["mha"])
    parts = capstone.load_own_parts(lay_out(tmp_path, answers), d_model=CONFIG["d_model"])
    failed = outcome(parts, "02_multi_head_attention", "MultiHeadAttention")
    assert not failed.passed and failed.used == "reference (nn.MultiheadAttention)"
    assert failed.detail.startswith("failed: self-attention: weights (B, H, Lq, Lk): max difference"), failed.detail
    assert parts.multi_head_attention is reference.MultiHeadAttention
    assert outcome(parts, "01_attention", "scaled_dot_product_attention").used.startswith("checked only")
    assert outcome(parts, "04_encoder", "EncoderLayer").used == "yours"  # their layer, the reference attention
    model, losses = build_and_train(parts, classifier_class)
    assert isinstance(model.layers[0].layer.self_attn, reference.MultiHeadAttention) and len(losses) == 3


def test_a_blank_answer_is_named_not_done_and_replaced(tmp_path, solved, classifier_class):
    answers = {name: cells for name, cells in solved.items() if name != "04_encoder"}  # 04 as released
    parts = capstone.load_own_parts(lay_out(tmp_path, answers), d_model=CONFIG["d_model"])
    blank = outcome(parts, "04_encoder", "EncoderLayer")
    assert (blank.passed, blank.detail) == (False, "not done yet (NotImplementedError)")
    assert blank.used == "reference (nn.TransformerEncoderLayer)" and parts.encoder_layer is None
    assert outcome(parts, "03_positional_encoding", "PositionalEncoding").used == "yours"
    model, _ = build_and_train(parts, classifier_class)
    assert isinstance(model.layers[0], reference.EncoderLayer)


def test_a_missing_notebook_is_named_and_replaced(tmp_path, solved, classifier_class):
    folder = lay_out(tmp_path, solved)
    missing = capstone.notebook_path(folder, "03_positional_encoding")
    missing.unlink()
    parts = capstone.load_own_parts(folder, d_model=CONFIG["d_model"])
    gone = outcome(parts, "03_positional_encoding", "PositionalEncoding")
    assert (gone.passed, gone.detail) == (False, f"not found: {missing}")
    assert gone.used == "reference (LearnedPositionalEncoding)" and parts.positional_encoding is None
    model, _ = build_and_train(parts, classifier_class)
    assert isinstance(model.positions, reference.LearnedPositionalEncoding)
    assert type(model.layers[0].layer).__module__ == "student_04_encoder"


def test_only_the_answer_cells_run_with_the_setup_cells_imports(tmp_path, solved):
    folder = lay_out(tmp_path, solved)
    path = capstone.notebook_path(folder, "01_attention")
    nb = nbformat.read(path, as_version=4)
    marker = tmp_path / "ran"
    nb.cells.append(nbformat.v4.new_code_cell(f"open({str(marker)!r}, 'w').close()"))  # not an answer cell
    nbformat.write(nb, path)
    module, errors = capstone.load_answers(path)
    assert not errors and not marker.exists()
    assert hasattr(module, "F") and hasattr(module, "causal_mask")  # an import of the setup cell, an answer
    assert not hasattr(module, "device") and not hasattr(module, "FAST")  # the setup cell's other lines


def test_an_answer_cell_that_raises_is_named(tmp_path, solved):
    answers = {**solved, "01_attention": {**solved["01_attention"], "sdpa": "import no_such_module\n"}}
    parts = capstone.load_own_parts(lay_out(tmp_path, answers), d_model=CONFIG["d_model"])
    broken = outcome(parts, "01_attention", "scaled_dot_product_attention")
    assert not broken.passed and "cell sdpa: ModuleNotFoundError" in broken.detail


def test_the_section_is_skipped_under_the_grader(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert not under_grader()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert under_grader()


def test_a_notebook_that_is_not_json_is_named(tmp_path, solved):
    folder = lay_out(tmp_path, solved)
    capstone.notebook_path(folder, "05_encoder_decoder").write_text("{ not a notebook")
    parts = capstone.load_own_parts(folder, d_model=CONFIG["d_model"])
    broken = outcome(parts, "05_encoder_decoder", "DecoderLayer")
    assert not broken.passed and broken.detail.startswith("could not be read: ValueError:"), broken.detail
    assert all(o.passed for o in parts.outcomes if o.notebook != "05_encoder_decoder")
