"""Unit tests of the helper package: device choice, fast mode, visible-test checks, figures."""

import matplotlib
import pytest
import torch

from tfcourse import checks, device, modes, plots

matplotlib.use("Agg")


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, False),
        ({"NBGRADER_EXECUTION": "autograde"}, True),
        ({"NBGRADER_EXECUTION": "validate"}, True),
        ({"TFCOURSE_FAST": "1"}, True),
        ({"TFCOURSE_FAST": "true"}, True),
        ({"TFCOURSE_FAST": "0"}, False),
        ({"TFCOURSE_FAST": ""}, False),
    ],
)
def test_fast_mode_follows_the_environment(monkeypatch, environment, expected):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.delenv("TFCOURSE_FAST", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert modes.fast_mode() is expected


def test_device_prefers_cuda_then_mps_when_opted_in_then_cpu(monkeypatch):
    monkeypatch.delenv(device.MPS_ENV_VAR, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert device.get_device() == torch.device("cpu")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert device.get_device() == torch.device("cpu"), "a Mac's GPU is used only when the student opts in"
    monkeypatch.setenv(device.MPS_ENV_VAR, "1")
    assert device.get_device() == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device.get_device() == torch.device("cuda")


def test_seed_everything_repeats_draws():
    device.seed_everything(3)
    first = torch.randn(4)
    device.seed_everything(3)
    assert torch.equal(first, torch.randn(4))


def test_check_close_prints_the_relative_error(capsys):
    checks.check_close("x", torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    assert "x: relative error" in capsys.readouterr().out


def test_check_close_says_where_and_why_it_failed():
    with pytest.raises(AssertionError) as failure:
        checks.check_close("weights", torch.tensor([0.5, 0.5]), torch.tensor([0.25, 0.75]), hint="wrong axis?")
    message = str(failure.value)
    assert "weights: relative error 3.3e-01" in message
    assert "expected 0.25, got 0.5" in message
    assert "Likely cause: wrong axis?" in message


def test_check_close_says_when_the_value_compared_with_holds_nan():
    # An inverted padding mask: the text alone, every key masked, gives NaN where the logits were expected.
    expected = torch.tensor([[0.5, 0.5], [float("nan"), float("nan")]])
    with pytest.raises(AssertionError) as failure:
        checks.check_close("logits", torch.tensor([[0.5, 0.5], [0.1, 0.9]]), expected, hint="check the mask.")
    message = str(failure.value)
    assert "holds NaN where a number was expected, in 2 of 4 entries (the first at index (1, 0))" in message
    assert "every position is masked" in message and "Likely cause: check the mask." in message


def test_checks_reject_wrong_shape_dtype_type_and_nan():
    with pytest.raises(AssertionError, match=r"shape \(2, 3\), got \(3, 2\)"):
        checks.check_shape("out", torch.zeros(3, 2), (2, 3))
    with pytest.raises(AssertionError, match="dtype torch.bool, got torch.float32"):
        checks.check_dtype("mask", torch.zeros(2), torch.bool)
    with pytest.raises(AssertionError, match="(?s)got NoneType.*missing `return`"):
        checks.check_shape("out", None, (1,))
    with pytest.raises(AssertionError, match="1 entries are NaN"):
        checks.check_finite("out", torch.tensor([0.0, float("nan")]))
    with pytest.raises(AssertionError, match=r"index \(1,\): expected True, got False"):
        checks.check_equal("mask", torch.tensor([True, False]), torch.tensor([True, True]))
    with pytest.raises(AssertionError, match="max absolute difference 1.0e-01"):
        checks.check_near("out", torch.tensor([0.1]), torch.tensor([0.0]), max_diff=1e-2)


def test_checks_pass_quietly_on_matching_values(capsys):
    checks.check_equal("mask", torch.tensor([True]), torch.tensor([True]))
    checks.check_near("out", torch.tensor([0.1]), torch.tensor([0.1001]), max_diff=1e-2)
    assert "exact match" in capsys.readouterr().out


def test_plots_return_titled_labelled_figures():
    weights = torch.softmax(torch.randn(3, 4), dim=-1)
    heatmap = plots.attention_heatmap(weights, ["a", "b", "c"], ["w", "x", "y", "z"], title="demo")
    axes = heatmap.axes[0]
    assert axes.get_title() == "demo" and axes.get_xlabel() and axes.get_ylabel()
    assert [t.get_text() for t in axes.get_xticklabels()] == ["w", "x", "y", "z"]
    picture = plots.mask_image(torch.ones(3, 3, dtype=torch.bool).tril(), "causal")
    assert picture.axes[0].get_title() == "causal"
    with pytest.raises(ValueError, match="2-D"):
        plots.mask_image(torch.ones(2, 2, 2, dtype=torch.bool), "3-D")


def test_check_rebuilt_without_sees_the_builtin_however_it_was_imported():
    import torch.nn.functional as F
    from torch.nn.functional import scaled_dot_product_attention as renamed

    q = torch.randn(1, 2, 4)
    with checks.check_rebuilt_without("mine", F.multi_head_attention_forward):
        renamed(q, q, q)  # a function that is not forbidden passes
    with pytest.raises(AssertionError, match="mine calls torch's own scaled_dot_product_attention"):
        with checks.check_rebuilt_without("mine", F.scaled_dot_product_attention):
            renamed(q, q, q)
    layer = torch.nn.MultiheadAttention(4, 2, batch_first=True)
    with pytest.raises(AssertionError, match="multi_head_attention_forward"):
        with checks.check_rebuilt_without("MultiHeadAttention", F.multi_head_attention_forward):
            layer(q, q, q)


def test_mask_image_wraps_a_long_title_to_the_grid():
    picture = plots.mask_image(torch.ones(4, 4, dtype=torch.bool), "a title far too long to fit above a small grid")
    title = picture.axes[0].get_title()
    assert "\n" in title and title.replace("\n", " ") == "a title far too long to fit above a small grid"
