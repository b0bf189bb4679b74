"""PyTorch's own building blocks behind thin adapters with the course's conventions.

Later notebooks need components that earlier notebooks ask students to write. Handing
out our from-scratch answers would leak them, and reusing a student's own answer would
let one early mistake block every later notebook. So a later notebook imports these
adapters instead: each one calls PyTorch's built-in operator and only translates
conventions (masks are boolean with True = may attend; a masked score is filled with
``torch.finfo(dtype).min`` so a fully masked row gives uniform weights, never NaN).
"""

import torch
import torch.nn.functional as F
from torch import nn

from tfcourse.messages import tr


def additive_mask(mask: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor | None:
    """Boolean mask (True = may attend) -> float mask to add to the scores (0 or dtype's most negative)."""
    if mask is None:
        return None
    if mask.dtype != torch.bool:
        raise TypeError(tr("masks are boolean (True = may attend), got dtype {dtype}", dtype=mask.dtype))
    blocked = torch.full((), torch.finfo(dtype).min, dtype=dtype, device=mask.device)
    return torch.where(mask, torch.zeros((), dtype=dtype, device=mask.device), blocked)


def attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention returning ``(output, weights)``, built on ``F.scaled_dot_product_attention``.

    query (..., Lq, Dk), key (..., Lk, Dk), value (..., Lk, Dv); mask bool, broadcastable
    to (..., Lq, Lk), True = may attend; dropout: optional module applied to the weights.
    Returns output (..., Lq, Dv) and the weights (..., Lq, Lk) that multiplied ``value``.

    PyTorch's function returns only the output. Attending over an identity matrix as the
    values returns the weights themselves, since ``weights @ I = weights``.
    """
    length = key.size(-2)
    identity = torch.eye(length, dtype=query.dtype, device=query.device)
    identity = identity.expand(*key.shape[:-2], length, length)  # (..., Lk, Lk)
    weights = F.scaled_dot_product_attention(query, key, identity, attn_mask=additive_mask(mask, query.dtype))
    if dropout is not None:
        weights = dropout(weights)
    return weights @ value, weights


def _expanded_additive_mask(
    mask: torch.Tensor | None, batch: int, num_heads: int, lq: int, lk: int, dtype: torch.dtype
) -> torch.Tensor | None:
    """Course mask broadcastable to (B, H, Lq, Lk) -> float mask (B*H, Lq, Lk) for ``nn.MultiheadAttention``."""
    if mask is None:
        return None
    if mask.dim() > 4:
        raise ValueError(
            tr("a mask has at most 4 dimensions (B, H, Lq, Lk), got shape {shape}", shape=tuple(mask.shape))
        )
    try:
        full = mask.expand(batch, num_heads, lq, lk)  # (B, H, Lq, Lk)
    except RuntimeError as error:
        raise ValueError(
            tr(
                "mask of shape {shape} does not broadcast to (B, H, Lq, Lk) = {full}",
                shape=tuple(mask.shape),
                full=(batch, num_heads, lq, lk),
            )
        ) from error
    return additive_mask(full.reshape(batch * num_heads, lq, lk), dtype)  # (B*H, Lq, Lk)


class MultiHeadAttention(nn.MultiheadAttention):
    """``nn.MultiheadAttention`` (batch first) with the course's call and mask: returns ``(output, weights)``.

    The parameters are exactly ``nn.MultiheadAttention``'s (``in_proj_weight``, ``in_proj_bias``,
    ``out_proj.weight``, ``out_proj.bias``), so weights load with ``load_state_dict`` from
    ``nn.TransformerEncoderLayer.self_attn`` or ``nn.TransformerDecoderLayer.self_attn`` /
    ``multihead_attn``, and back.

    ``forward(query (B, Lq, D), key (B, Lk, D), value (B, Lk, D), mask=None)`` returns the output
    (B, Lq, D) and the per-head weights (B, H, Lq, Lk) that multiplied the values (after dropout).
    ``mask`` is boolean, True = may attend, broadcastable to (B, H, Lq, Lk). PyTorch's own
    ``key_padding_mask`` means the opposite (True = ignore); this adapter translates, and a fully
    masked row gets uniform weights instead of NaN.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True) -> None:
        if d_model % num_heads != 0:
            raise ValueError(
                tr(
                    "d_model ({d_model}) must be divisible by num_heads ({num_heads})",
                    d_model=d_model,
                    num_heads=num_heads,
                )
            )
        super().__init__(d_model, num_heads, dropout=dropout, bias=bias, batch_first=True)

    def forward(  # type: ignore[override]
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        batch, lq, lk = query.size(0), query.size(1), key.size(1)
        attn_mask = _expanded_additive_mask(mask, batch, self.num_heads, lq, lk, query.dtype)
        output, weights = super().forward(
            query, key, value, attn_mask=attn_mask, need_weights=True, average_attn_weights=False
        )
        return output, weights  # (B, Lq, D), (B, H, Lq, Lk)


def _key_padding_mask(mask: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Course padding mask (B, 1, 1, L), True = real token -> PyTorch's additive key padding mask (B, L)."""
    batch, length = x.size(0), x.size(1)
    if mask.dtype != torch.bool:
        raise TypeError(tr("masks are boolean (True = real token), got dtype {dtype}", dtype=mask.dtype))
    if mask.dim() != 4 or mask.size(1) != 1 or mask.size(2) != 1 or mask.size(-1) != length:
        raise ValueError(
            tr(
                "EncoderLayer takes a padding mask of shape (B, 1, 1, L) = {expected}, got {got}; "
                "build it with padding_mask(ids, pad_idx)",
                expected=(batch, 1, 1, length),
                got=tuple(mask.shape),
            )
        )
    keep = mask[:, 0, 0, :].expand(batch, length)  # (B, L)
    return additive_mask(keep, x.dtype)  # (B, L): 0 for real tokens, finfo.min for padding


class EncoderLayer(nn.Module):
    """One ``nn.TransformerEncoderLayer`` (batch first, ReLU) with the course's padding mask.

    ``forward(x (B, L, D), mask=None) -> (B, L, D)``, where ``mask`` is the course's padding
    mask of shape (B, 1, 1, L), True = real token (``padding_mask(ids, pad_idx)`` in notebook
    01). PyTorch's ``src_key_padding_mask`` means the opposite (True = padding); this adapter
    translates it to an additive mask filled with ``torch.finfo(dtype).min``, so even a sequence
    made only of padding gives finite outputs. Post-LN when ``norm_first=False``, Pre-LN when
    True. The PyTorch module is the attribute ``layer``.
    """

    def __init__(
        self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False
    ) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model, num_heads, d_ff, dropout, batch_first=True, norm_first=norm_first
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if mask is None:
            return self.layer(x)  # (B, L, D)
        padding = _key_padding_mask(mask, x)  # (B, L)
        if self.training or mask.device.type == "meta" or bool(mask.any(dim=-1).all()):
            return self.layer(x, src_key_padding_mask=padding)  # (B, L, D)
        # PyTorch's fused inference kernel returns NaN for a sequence made only of padding;
        # its reference path (taken here) gives finite outputs with the finfo.min mask.
        fastpath = torch.backends.mha.get_fastpath_enabled()
        torch.backends.mha.set_fastpath_enabled(False)
        try:
            return self.layer(x, src_key_padding_mask=padding)  # (B, L, D)
        finally:
            torch.backends.mha.set_fastpath_enabled(fastpath)


class LearnedPositionalEncoding(nn.Module):
    """Learned absolute positions: ``x + embedding(0..L-1)``, then dropout (as in BERT and GPT-2).

    ``forward(x (B, L, D)) -> (B, L, D)``; raises ``ValueError`` when L > ``max_len``.
    PyTorch has no sinusoidal positional-encoding module, and notebook 03's sinusoidal one is
    an exercise answer, so later notebooks use this module instead. It is a drop-in
    replacement: same call, same shapes. The embedding starts as ``nn.Embedding``'s N(0, 1),
    the same scale as the sinusoidal table's entries.
    """

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.0) -> None:
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        length = x.size(1)
        if length > self.max_len:
            raise ValueError(
                tr(
                    "sequence length {length} is longer than max_len={max_len}; "
                    "build the module with a larger max_len or truncate the input",
                    length=length,
                    max_len=self.max_len,
                )
            )
        positions = torch.arange(length, device=x.device)  # (L,)
        return self.dropout(x + self.embedding(positions).to(x.dtype))  # (B, L, D)
