"""Variants of the answers of 02_multi_head_attention: realistic mistakes (mutants) and other correct answers."""

from testbed.variants.spec import Blame, alternative, mutant

ASSIGNMENT = "02_multi_head_attention"

SPLIT_CHECK = (
    "    if d_model % num_heads != 0:\n"
    '        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")\n'
)
SPLIT_VIEW = (
    "    x = x.view(batch, length, num_heads, d_head)  # (B, L, H, Dh)\n    return x.transpose(1, 2)  # (B, H, L, Dh)\n"
)

MERGE_TRANSPOSE = "    x = x.transpose(1, 2)  # (B, L, H, Dh), not contiguous\n"
# merge_heads filling a new tensor head by head: right with dtype=x.dtype and device=x.device, wrong without either.
MERGE_BY_HEAD = """
def merge_heads(x):
    batch, num_heads, length, d_head = x.shape
    merged = torch.zeros(batch, length, num_heads * d_head{options})  # (B, L, D)
    for h in range(num_heads):
        merged[:, :, h * d_head : (h + 1) * d_head] = x[:, h]
    return merged
"""

MHA_CHECK = (
    "        if d_model % num_heads != 0:\n"
    '            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")\n'
)
MHA_ATTEND = "        heads, weights = attention("
MHA_FORWARD = (
    "        q = split_heads(self.w_q(query), self.num_heads)  # (B, H, Lq, Dh)\n"
    "        k = split_heads(self.w_k(key), self.num_heads)  # (B, H, Lk, Dh)\n"
    "        v = split_heads(self.w_v(value), self.num_heads)  # (B, H, Lk, Dh)\n"
    "        heads, weights = attention(q, k, v, mask=mask, dropout=self.dropout)  # (B, H, Lq, Dh), (B, H, Lq, Lk)\n"
    "        output = self.w_o(merge_heads(heads))  # (B, Lq, D)\n"
    "        return output, weights\n"
)


def own_attention(fill: str, scale: str) -> str:
    """A forward body that re-types notebook 01's attention instead of calling `attention`."""
    return (
        "        q = split_heads(self.w_q(query), self.num_heads)\n"
        "        k = split_heads(self.w_k(key), self.num_heads)\n"
        "        v = split_heads(self.w_v(value), self.num_heads)\n"
        f"        scores = q @ k.transpose(-2, -1) / math.sqrt({scale})\n"
        "        if mask is not None:\n"
        f"            scores = scores.masked_fill(~mask, {fill})\n"
        "        weights = self.dropout(scores.softmax(dim=-1))\n"
        "        return self.w_o(merge_heads(weights @ v)), weights\n"
    )


VARIANTS = [
    # --- split_heads: mistakes ---
    mutant(
        "split_heads",
        "view_heads_first_no_transpose",
        (SPLIT_VIEW, "    return x.view(batch, num_heads, length, d_head)\n"),
    ),
    mutant("split_heads", "forgets_the_transpose", ("return x.transpose(1, 2)", "return x")),
    mutant("split_heads", "transpose_last_two_axes", ("x.transpose(1, 2)", "x.transpose(-2, -1)")),
    mutant(
        "split_heads",
        "head_index_fastest",  # cut into (Dh, H): head h gets features h, h + H, h + 2H, ...
        ("x.view(batch, length, num_heads, d_head)", "x.view(batch, length, d_head, num_heads).transpose(2, 3)"),
    ),
    mutant("split_heads", "float_head_size", ("d_model // num_heads", "d_model / num_heads")),
    mutant("split_heads", "no_divisibility_check", (SPLIT_CHECK, "")),
    mutant(
        "split_heads",
        "sequence_first_habit",
        ("batch, length, d_model = x.shape", "length, batch, d_model = x.shape"),
    ),
    mutant(
        "split_heads",
        "message_without_numbers",
        ('f"d_model={d_model} is not divisible by num_heads={num_heads}"', '"d_model must be divisible by num_heads"'),
    ),
    mutant(
        "split_heads", "copies_with_contiguous", ("return x.transpose(1, 2)", "return x.transpose(1, 2).contiguous()")
    ),
    mutant("split_heads", "copies_with_clone", ("x = x.view(batch,", "x = x.clone().view(batch,")),
    mutant(
        "split_heads",
        "copies_with_chunk_and_stack",  # right values, but torch.stack copies: the TODO asks for a view
        source="""
        def split_heads(x, num_heads):
            if x.size(-1) % num_heads:
                raise ValueError(f"{x.size(-1)} features cannot be split into {num_heads} heads")
            return torch.stack(x.chunk(num_heads, dim=-1), dim=1)
        """,
    ),
    mutant(
        "split_heads",
        "casts_to_float32",  # a no-op on float32 input, so still a view there; a copy in float32 for bfloat16
        ("x = x.view(batch,", "x = x.float().view(batch,"),
        spares=("split_heads_shapes", "split_heads_indivisible", "split_heads_view"),
    ),
    mutant(
        "split_heads",
        "features_gathered_with_an_index",  # head h's features picked by an index made on the default device
        ("x = x.view(batch, length, num_heads, d_head)", "x = x[..., torch.arange(d_model).view(num_heads, d_head)]"),
        spares=("split_heads_shapes", "split_heads_indivisible"),
    ),
    # --- split_heads: other correct answers ---
    alternative(
        "split_heads",
        "unflatten_and_permute",
        """
        def split_heads(x, num_heads):
            d_model = x.shape[-1]
            if d_model % num_heads != 0:
                raise ValueError(f"cannot split {d_model} features into {num_heads} heads")
            return x.unflatten(-1, (num_heads, d_model // num_heads)).permute(0, 2, 1, 3)
        """,
    ),
    alternative(
        "split_heads",
        "reshape_and_swapaxes",
        """
        def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
            b, l, d = x.size()
            head_size, rest = divmod(d, num_heads)
            if rest:
                raise ValueError(f"{d} is not a multiple of {num_heads}")
            return x.reshape(b, l, num_heads, head_size).swapaxes(1, 2)
        """,
    ),
    # --- merge_heads: mistakes ---
    mutant("merge_heads", "view_after_transpose", ("x.reshape(", "x.view(")),
    mutant(
        "merge_heads",
        "contiguous_before_transpose",
        ("x = x.transpose(1, 2)", "x = x.contiguous().transpose(1, 2)"),
        ("x.reshape(", "x.view("),
    ),
    mutant("merge_heads", "no_transpose", (MERGE_TRANSPOSE, "")),
    mutant("merge_heads", "head_index_fastest", ("x.transpose(1, 2)", "x.permute(0, 2, 3, 1)")),
    mutant("merge_heads", "transpose_last_two_axes", ("x.transpose(1, 2)", "x.transpose(-2, -1)")),
    mutant(
        "merge_heads",
        "output_made_in_float32",
        source=MERGE_BY_HEAD.format(options=", device=x.device"),
        spares=("merge_heads_shapes", "merge_heads_non_contiguous"),
    ),
    mutant(
        "merge_heads",
        "output_made_on_the_default_device",
        source=MERGE_BY_HEAD.format(options=", dtype=x.dtype"),
        spares=("merge_heads_shapes", "merge_heads_non_contiguous"),
    ),
    # --- merge_heads: other correct answers ---
    alternative(
        "merge_heads",
        "unbind_and_cat",
        """
        def merge_heads(x):
            return torch.cat(x.unbind(dim=1), dim=-1)
        """,
    ),
    alternative(
        "merge_heads",
        "contiguous_then_view",
        """
        def merge_heads(x):
            b, h, l, d = x.shape
            return x.transpose(1, 2).contiguous().view(b, l, h * d)
        """,
    ),
    alternative(
        "merge_heads",
        "permute_and_flatten",
        """
        def merge_heads(x: torch.Tensor) -> torch.Tensor:
            return x.permute(0, 2, 1, 3).flatten(start_dim=2)
        """,
    ),
    # --- MultiHeadAttention: mistakes ---
    mutant("mha", "key_projected_with_w_q", ("self.w_k(key)", "self.w_q(key)")),
    mutant("mha", "value_projected_with_w_k", ("self.w_v(value)", "self.w_k(value)")),
    mutant("mha", "self_attention_only", ("self.w_k(key)", "self.w_k(query)"), ("self.w_v(value)", "self.w_v(query)")),
    mutant("mha", "missing_w_o", ("self.w_o(merge_heads(heads))", "merge_heads(heads)")),
    mutant("mha", "mask_not_passed", ("mask=mask, ", "")),
    mutant("mha", "mask_inverted_like_pytorch", ("mask=mask,", "mask=None if mask is None else ~mask,")),
    mutant(
        "mha",
        "annotated_transformer_unsqueeze",
        (MHA_ATTEND, "        if mask is not None:\n            mask = mask.unsqueeze(1)\n" + MHA_ATTEND),
    ),
    mutant(
        "mha",
        "heads_not_split",
        ("split_heads(self.w_q(query), self.num_heads)", "self.w_q(query)"),
        ("split_heads(self.w_k(key), self.num_heads)", "self.w_k(key)"),
        ("split_heads(self.w_v(value), self.num_heads)", "self.w_v(value)"),
        ("merge_heads(heads)", "heads"),
    ),
    mutant(  # keys and values cut with the query's length: fine in self-attention only
        "mha",
        "keys_split_with_the_query_length",
        (
            "split_heads(self.w_k(key), self.num_heads)",
            "self.w_k(key).view(query.size(0), query.size(1), self.num_heads, -1).transpose(1, 2)",
        ),
        (
            "split_heads(self.w_v(value), self.num_heads)",
            "self.w_v(value).view(query.size(0), query.size(1), self.num_heads, -1).transpose(1, 2)",
        ),
    ),
    mutant("mha", "global_num_heads", ("), self.num_heads)", "), num_heads)")),  # section 1 left num_heads = 3
    mutant("mha", "averaged_weights", ("return output, weights", "return output, weights.mean(dim=1)")),
    mutant("mha", "weights_returned_in_float32", ("return output, weights", "return output, weights.float()")),
    mutant(  # the visible tests' bfloat16 comes back; float64 and float16 weights come back float32
        "mha",
        "weights_float32_unless_bfloat16",
        (
            "return output, weights",
            "weights = weights.float()  # for the heatmaps\n"
            "        return output, (weights.bfloat16() if query.dtype == torch.bfloat16 else weights)",
        ),
    ),
    mutant("mha", "dropout_ignored", ("dropout=self.dropout", "dropout=None")),
    mutant(
        "mha",
        "dropout_on_output",
        ("dropout=self.dropout", "dropout=None"),
        ("output = self.w_o(merge_heads(heads))", "output = self.dropout(self.w_o(merge_heads(heads)))"),
    ),
    mutant("mha", "no_value_error", (MHA_CHECK, "")),
    mutant("mha", "bias_always_on", (", bias=bias)", ")")),
    mutant(
        "mha", "heads_and_head_size_confused", ("self.num_heads = num_heads", "self.num_heads = d_model // num_heads")
    ),
    mutant(
        "mha",
        "default_mask_made_on_the_cpu",
        (
            MHA_ATTEND,
            "        if mask is None:\n"
            "            mask = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool)\n" + MHA_ATTEND,
        ),
    ),
    mutant("mha", "own_attention_fills_minus_inf", (MHA_FORWARD, own_attention('float("-inf")', "q.size(-1)"))),
    mutant(
        "mha",
        "own_attention_scaled_by_d_model",
        (MHA_FORWARD, own_attention("torch.finfo(scores.dtype).min", "query.size(-1)")),
    ),
    mutant(
        "mha",
        "wraps_nn_multiheadattention",
        (
            MHA_FORWARD,
            "        d_model = query.size(-1)\n"
            "        with_bias = self.w_q.bias is not None\n"
            "        twin = nn.MultiheadAttention(d_model, self.num_heads, bias=with_bias, batch_first=True)\n"
            "        twin = twin.to(device=query.device, dtype=query.dtype)\n"
            "        with torch.no_grad():\n"
            "            twin.in_proj_weight.copy_(torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight]))\n"
            "            twin.out_proj.weight.copy_(self.w_o.weight)\n"
            "            if with_bias:\n"
            "                twin.in_proj_bias.copy_(torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias]))\n"
            "                twin.out_proj.bias.copy_(self.w_o.bias)\n"
            "        blocked = None if mask is None else ~mask.expand(query.size(0), self.num_heads, query.size(1),\n"
            "                                                         key.size(1)).flatten(0, 1)\n"
            "        return twin(query, key, value, attn_mask=blocked, average_attn_weights=False)\n",
        ),
    ),
    # --- MultiHeadAttention: other correct answers ---
    alternative(
        "mha",
        "fused_projection_for_self_attention",
        """
        class MultiHeadAttention(nn.Module):
            def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
                super().__init__()
                if d_model % num_heads:
                    raise ValueError(f"{d_model} features cannot be split into {num_heads} heads")
                self.num_heads = num_heads
                self.w_q = nn.Linear(d_model, d_model, bias=bias)
                self.w_k = nn.Linear(d_model, d_model, bias=bias)
                self.w_v = nn.Linear(d_model, d_model, bias=bias)
                self.w_o = nn.Linear(d_model, d_model, bias=bias)
                self.dropout = nn.Dropout(dropout)

            def forward(self, query, key, value, mask=None):
                if query is key and key is value:  # self-attention: one matrix product for Q, K and V
                    weight = torch.cat([self.w_q.weight, self.w_k.weight, self.w_v.weight])
                    bias = None if self.w_q.bias is None else torch.cat([self.w_q.bias, self.w_k.bias, self.w_v.bias])
                    q, k, v = F.linear(query, weight, bias).chunk(3, dim=-1)
                else:
                    q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
                q, k, v = (split_heads(t, self.num_heads) for t in (q, k, v))
                heads, weights = attention(q, k, v, mask=mask, dropout=self.dropout)
                return self.w_o(merge_heads(heads)), weights
        """,
    ),
    alternative(
        "mha",
        "drops_a_mask_that_blocks_nothing",  # reads the mask's data, which a device check on meta tensors could not
        """
        class MultiHeadAttention(nn.Module):
            def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
                super().__init__()
                if d_model % num_heads:
                    raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
                self.num_heads = num_heads
                self.w_q = nn.Linear(d_model, d_model, bias=bias)
                self.w_k = nn.Linear(d_model, d_model, bias=bias)
                self.w_v = nn.Linear(d_model, d_model, bias=bias)
                self.w_o = nn.Linear(d_model, d_model, bias=bias)
                self.dropout = nn.Dropout(dropout)

            def forward(self, query, key, value, mask=None):
                if mask is not None and bool(mask.all()):
                    mask = None  # every key allowed everywhere: the same as no mask
                q = split_heads(self.w_q(query), self.num_heads)
                k = split_heads(self.w_k(key), self.num_heads)
                v = split_heads(self.w_v(value), self.num_heads)
                heads, weights = attention(q, k, v, mask=mask, dropout=self.dropout)
                return self.w_o(merge_heads(heads)), weights
        """,
    ),
    alternative(
        "mha",
        "loop_over_heads",
        """
        class MultiHeadAttention(nn.Module):
            def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
                super().__init__()
                if d_model % num_heads != 0:
                    raise ValueError(f"num_heads={num_heads} does not divide d_model={d_model}")
                self.num_heads, self.d_head = num_heads, d_model // num_heads
                self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model, bias=bias) for _ in range(4))
                self.dropout = nn.Dropout(p=dropout)

            def forward(self, query, key, value, mask=None):
                batch, lq, lk = query.size(0), query.size(1), key.size(1)
                q, k, v = self.w_q(query), self.w_k(key), self.w_v(value)
                keep = None if mask is None else mask.expand(batch, self.num_heads, lq, lk)
                outputs, weights = [], []
                for h in range(self.num_heads):
                    part = slice(h * self.d_head, (h + 1) * self.d_head)
                    out_h, w_h = attention(q[..., part], k[..., part], v[..., part],
                                           mask=None if keep is None else keep[:, h], dropout=self.dropout)
                    outputs.append(out_h)
                    weights.append(w_h)
                return self.w_o(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=1)
        """,
    ),
    alternative(
        "mha",
        "einsum_and_functional_dropout",
        """
        class MultiHeadAttention(nn.Module):
            def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
                super().__init__()
                if d_model % num_heads:
                    raise ValueError(f"d_model ({d_model}) % num_heads ({num_heads}) != 0")
                for name in ("w_q", "w_k", "w_v", "w_o"):
                    setattr(self, name, nn.Linear(d_model, d_model, bias=bias))
                self.heads = num_heads
                self.p = dropout

            def forward(self, query, key, value, mask=None):
                q, k, v = (layer(x).unflatten(-1, (self.heads, -1)).transpose(1, 2)
                           for layer, x in ((self.w_q, query), (self.w_k, key), (self.w_v, value)))
                scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.size(-1))
                if mask is not None:
                    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
                weights = F.dropout(scores.softmax(dim=-1), self.p, self.training)
                heads = torch.einsum("bhqk,bhkd->bhqd", weights, v)
                return self.w_o(heads.transpose(1, 2).flatten(2)), weights
        """,
    ),
]

# merge_heads with .view after the transpose raises PyTorch's stride error on any input; each merge_heads test cell
# turns it into the idea (memory order after a transpose), not a shape or a value to chase.
VIEW_ERROR_TAUGHT = "memory still holds each head's tokens"
BLAMES = [
    *(
        Blame(f"merge_heads-mutant-{name}", "merge_heads_shapes", VIEW_ERROR_TAUGHT, "should have shape")
        for name in ("view_after_transpose", "contiguous_before_transpose")
    ),
    Blame("merge_heads-mutant-view_after_transpose", "merge_heads_values", VIEW_ERROR_TAUGHT, "mixes tokens"),
    Blame("merge_heads-mutant-view_after_transpose", "merge_heads_non_contiguous", VIEW_ERROR_TAUGHT, "differs from"),
]
