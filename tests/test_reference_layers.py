"""The reference layers are PyTorch's own modules: same numbers, the course's masks, no NaN."""

import pytest
import torch
from torch import nn

from tfcourse.reference import EncoderLayer, LearnedPositionalEncoding, MultiHeadAttention


def generator(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=generator(seed)).to(dtype)


def padding(lengths: list[int], length: int) -> torch.Tensor:
    """Course padding mask (B, 1, 1, L), True = real token."""
    return (torch.arange(length)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :]


# --- MultiHeadAttention ---------------------------------------------------------------------------


def test_mha_state_dict_is_pytorchs_and_loads_from_the_pytorch_layers():
    ours = MultiHeadAttention(16, 4)
    assert set(ours.state_dict()) == set(nn.MultiheadAttention(16, 4, batch_first=True).state_dict())
    encoder = nn.TransformerEncoderLayer(16, 4, 32, batch_first=True)
    decoder = nn.TransformerDecoderLayer(16, 4, 32, batch_first=True)
    ours.load_state_dict(encoder.self_attn.state_dict())
    ours.load_state_dict(decoder.multihead_attn.state_dict())
    assert torch.equal(ours.in_proj_weight, decoder.multihead_attn.in_proj_weight)
    assert ours.batch_first


def test_mha_matches_pytorch_with_per_head_weights_and_cross_attention():
    torch.manual_seed(0)
    ours = MultiHeadAttention(12, 3).eval()
    theirs = nn.MultiheadAttention(12, 3, batch_first=True).eval()
    theirs.load_state_dict(ours.state_dict())
    query, key, value = randn(2, 3, 12, seed=1), randn(2, 5, 12, seed=2), randn(2, 5, 12, seed=3)
    output, weights = ours(query, key, value)
    expected, expected_weights = theirs(query, key, value, average_attn_weights=False)
    assert output.shape == (2, 3, 12) and weights.shape == (2, 3, 3, 5)
    torch.testing.assert_close(output, expected)
    torch.testing.assert_close(weights, expected_weights)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 3))


@pytest.mark.parametrize("mask_shape", [(2, 1, 1, 5), (2, 1, 3, 5), (2, 4, 3, 5), (3, 5), (5,)])
def test_mha_mask_true_means_may_attend_and_broadcasts(mask_shape):
    torch.manual_seed(0)
    ours = MultiHeadAttention(16, 4).eval()
    theirs = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    theirs.load_state_dict(ours.state_dict())
    query, key = randn(2, 3, 16, seed=1), randn(2, 5, 16, seed=2)
    mask = torch.rand(mask_shape, generator=generator(4)) > 0.3
    mask[..., 0] = True  # no fully masked row here: PyTorch itself gives NaN there
    output, weights = ours(query, key, key, mask)
    blocked = ~mask.expand(2, 4, 3, 5).reshape(8, 3, 5)  # PyTorch: True = may NOT attend
    expected, expected_weights = theirs(query, key, key, attn_mask=blocked, average_attn_weights=False)
    torch.testing.assert_close(output, expected)
    torch.testing.assert_close(weights, expected_weights)
    assert torch.all(weights.masked_select(~mask.expand_as(weights)) == 0)


@pytest.mark.parametrize("grad", [True, False])
def test_mha_fully_masked_row_is_uniform_not_nan(grad):
    ours = MultiHeadAttention(8, 2).eval()
    query, key = randn(2, 3, 8, seed=1), randn(2, 4, 8, seed=2)
    mask = torch.ones(2, 1, 3, 4, dtype=torch.bool)
    mask[1, 0, 2] = False
    with torch.set_grad_enabled(grad):
        output, weights = ours(query, key, key, mask)
    assert torch.isfinite(output).all()
    torch.testing.assert_close(weights[1, :, 2], torch.full((2, 4), 0.25))


def test_mha_works_in_bfloat16_with_a_mask():
    torch.manual_seed(0)
    ours = MultiHeadAttention(16, 4).eval()
    reference = MultiHeadAttention(16, 4).eval()
    reference.load_state_dict(ours.state_dict())
    ours = ours.to(torch.bfloat16)
    query = randn(2, 5, 16, seed=1)
    mask = padding([5, 2], 5)
    output, weights = ours(query.bfloat16(), query.bfloat16(), query.bfloat16(), mask)
    expected, _ = reference(query, query, query, mask)
    assert output.dtype == weights.dtype == torch.bfloat16
    torch.testing.assert_close(output.float(), expected, atol=5e-2, rtol=5e-2)
    assert torch.all(weights[1, :, :, 2:] == 0)


def test_mha_runs_on_the_meta_device_and_rejects_bad_shapes():
    ours = MultiHeadAttention(8, 2).to("meta")
    x = torch.empty(2, 3, 8, device="meta")
    output, weights = ours(x, x, x, torch.ones(2, 1, 1, 3, dtype=torch.bool, device="meta"))
    assert output.shape == (2, 3, 8) and weights.shape == (2, 2, 3, 3)
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="broadcast"):
        MultiHeadAttention(8, 2)(
            torch.zeros(2, 3, 8), torch.zeros(2, 3, 8), torch.zeros(2, 3, 8), torch.ones(2, 1, 1, 4, dtype=torch.bool)
        )
    with pytest.raises(TypeError, match="boolean"):
        MultiHeadAttention(8, 2)(torch.zeros(2, 3, 8), torch.zeros(2, 3, 8), torch.zeros(2, 3, 8), torch.ones(3, 3))


def test_mha_dropout_is_applied_to_the_returned_weights_in_training():
    torch.manual_seed(0)
    ours = MultiHeadAttention(8, 2, dropout=0.5).train()
    x = randn(1, 6, 8, seed=1)
    _, weights = ours(x, x, x)
    assert (weights == 0).any()
    assert not torch.allclose(weights.sum(-1), torch.ones(1, 2, 6))


# --- EncoderLayer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_is_pytorchs_layer_with_the_course_padding_mask(norm_first):
    torch.manual_seed(0)
    ours = EncoderLayer(16, 4, 32, norm_first=norm_first).eval()
    assert isinstance(ours.layer, nn.TransformerEncoderLayer) and ours.layer.norm_first is norm_first
    x = randn(3, 5, 16, seed=1)
    mask = padding([5, 3, 1], 5)
    torch.testing.assert_close(ours(x), ours.layer(x))
    output = ours(x, mask)
    expected = ours.layer(x, src_key_padding_mask=~mask[:, 0, 0, :])  # PyTorch: True = padding
    assert output.shape == (3, 5, 16)
    torch.testing.assert_close(output, expected)
    # padding really is ignored: changing a padded token leaves the real tokens' outputs alone
    changed = x.clone()
    changed[1, 4] = 100.0
    torch.testing.assert_close(ours(changed, mask)[1, :3], output[1, :3])


@pytest.mark.parametrize("grad", [True, False])
def test_encoder_layer_all_padding_sequence_gives_finite_output(grad):
    ours = EncoderLayer(16, 4, 32).eval()
    x = randn(2, 5, 16, seed=1)
    with torch.set_grad_enabled(grad):
        output = ours(x, padding([5, 0], 5))
        again = ours(x, padding([5, 3], 5))
    assert torch.isfinite(output).all()
    torch.testing.assert_close(again[0], output[0])
    assert torch.backends.mha.get_fastpath_enabled()


def test_encoder_layer_bfloat16_and_clear_errors_for_other_masks():
    torch.manual_seed(0)
    ours = EncoderLayer(16, 4, 32).eval()
    x = randn(2, 5, 16, seed=1)
    expected = ours(x, padding([5, 2], 5))
    output = ours.to(torch.bfloat16)(x.bfloat16(), padding([5, 2], 5))
    assert output.dtype == torch.bfloat16
    torch.testing.assert_close(output.float()[0], expected[0], atol=0.1, rtol=0.1)
    with pytest.raises(ValueError, match=r"\(B, 1, 1, L\)"):
        ours(x.bfloat16(), torch.ones(2, 1, 5, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"\(B, 1, 1, L\)"):
        ours(x.bfloat16(), torch.ones(2, 1, 1, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="boolean"):
        ours(x.bfloat16(), torch.ones(2, 1, 1, 5))


# --- LearnedPositionalEncoding --------------------------------------------------------------------


def test_learned_positions_add_one_trainable_vector_per_position():
    encoding = LearnedPositionalEncoding(8, max_len=10)
    x = randn(2, 6, 8, seed=1)
    output = encoding(x)
    assert output.shape == (2, 6, 8)
    torch.testing.assert_close(output - x, encoding.embedding.weight[:6].expand(2, 6, 8))
    assert encoding.embedding.weight.requires_grad
    assert sum(p.numel() for p in encoding.parameters()) == 10 * 8


def test_learned_positions_bfloat16_meta_and_too_long():
    encoding = LearnedPositionalEncoding(8, max_len=10)
    assert encoding(randn(1, 10, 8).bfloat16()).dtype == torch.bfloat16
    assert encoding.to("meta")(torch.empty(2, 3, 8, device="meta")).shape == (2, 3, 8)
    with pytest.raises(ValueError, match="max_len=10"):
        LearnedPositionalEncoding(8, max_len=10)(torch.zeros(1, 11, 8))


def test_learned_positions_dropout_only_in_training():
    encoding = LearnedPositionalEncoding(8, max_len=10, dropout=0.5)
    x = randn(2, 6, 8, seed=1)
    assert (encoding.train()(x) == 0).any()
    torch.testing.assert_close(encoding.eval()(x), x + encoding.embedding.weight[:6])
