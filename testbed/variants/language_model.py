"""Variants of the answers of 07_language_model: realistic mistakes (mutants) and other correct answers."""

from testbed.variants.spec import Variant, alternative, mutant

ASSIGNMENT = "07_language_model"

# Lines of the reference answers that several mutants change.
INVERSE_FREQ = "inverse_freq = base ** (-torch.arange(0, dim, 2, device=x.device, dtype=torch.float32) / dim)"
ANGLES = "angles = positions.to(torch.float32)[:, None] * inverse_freq"
TURNED = "torch.stack([first * cos - second * sin, first * sin + second * cos], dim=-1)"
PAIRS = "pairs = x.float().unflatten(-1, (dim // 2, 2))"
ALLOWED = "torch.ones(q_len, k_len, dtype=torch.bool, device=q.device).tril(diagonal=k_len - q_len)"
SCORES = "scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))"
POSITIONS = "positions = torch.arange(past, past + length, device=x.device)"
CAT_K = "k = torch.cat([cache[0], k], dim=2)"
CAT_V = "v = torch.cat([cache[1], v], dim=2)"
SPLIT = "projected = self.qkv(x).view(batch, length, 3, self.num_heads, self.head_dim)"
MERGE = "merged = attended.transpose(1, 2).reshape(batch, length, d_model)"
TIE = "        self.head.weight = self.embed.weight  # tied: one parameter, two uses\n"
ATTN_RESIDUAL = "x = x + self.dropout(attended)"
FFN_RESIDUAL = "x = x + self.dropout(self.ffn(self.norm2(x)))"
LOGITS = "return self.head(self.norm(x)), new_caches"
DIVIDE = "last = last / temperature"
TOP_K_FILL = 'last = last.masked_fill(last < kth_largest, float("-inf"))'
KTH = "kth_largest = last.topk(top_k, dim=-1).values[:, -1:]"
SAMPLE = "next_token = torch.multinomial(last.softmax(dim=-1), num_samples=1, generator=generator)"
CACHED_CALL = "logits, caches = model(step_input, caches)"
GQA_POSITIONS = "positions = torch.arange(past, past + length, device=x.device)  # (L,)"
GQA_WIDEN = (
    "group = self.num_heads // self.num_kv_heads\n        "
    "k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)\n        "
)
GQA_CACHE_IF = "if cache is not None:\n            k = torch.cat([cache[0], k], dim=2)  # (B, G, P + L, Dh)"
GQA_ATTEND = "attended = causal_attention(q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1))"

VARIANTS = [
    # --- apply_rope: mistakes ---
    mutant(
        "rope",
        "rotate_half_pairs",  # GPT-NeoX's layout: feature i paired with i + D/2, not with its neighbour
        (PAIRS, "pairs = x.float().unflatten(-1, (2, dim // 2)).transpose(-1, -2)"),
        ("return turned.flatten(-2).to(x.dtype)", "return turned.transpose(-1, -2).flatten(-2).to(x.dtype)"),
    ),
    mutant(
        "rope",
        "turns_the_wrong_way",  # still a rotation: lengths, offsets, dtype and device are right
        (TURNED, "torch.stack([first * cos + second * sin, second * cos - first * sin], dim=-1)"),
        spares=("rope_shape_dtype", "rope_properties", "rope_dtype_device"),
    ),
    mutant(
        "rope",
        "frequencies_i_over_d",
        (INVERSE_FREQ, "inverse_freq = base ** (-torch.arange(dim // 2, device=x.device, dtype=torch.float32) / dim)"),
        spares=("rope_shape_dtype", "rope_properties", "rope_dtype_device"),
    ),
    mutant(
        "rope",
        "angles_in_bfloat16",
        (ANGLES, "angles = (positions.to(x.dtype)[:, None] * inverse_freq.to(x.dtype)).float()"),
    ),
    mutant(
        "rope",
        "positions_ignored",
        (ANGLES, "angles = torch.arange(x.size(-2), device=x.device, dtype=torch.float32)[:, None] * inverse_freq"),
    ),
    mutant(
        "rope",
        "angle_table_of_1024_positions",  # a precomputed table indexed by position % 1024: offsets past it break
        (ANGLES, "angles = (positions % 1024).to(torch.float32)[:, None] * inverse_freq"),
        spares=("rope_shape_dtype", "rope_values", "rope_dtype_device"),
    ),
    mutant(
        "rope",
        "positions_counted_from_one",
        (ANGLES, "angles = (positions + 1).to(torch.float32)[:, None] * inverse_freq"),
        spares=("rope_shape_dtype", "rope_dtype_device"),
    ),
    mutant(
        "rope",
        "rotation_without_the_minus",  # x cos + swap(x) sin: not a rotation, lengths change
        (TURNED, "torch.stack([first * cos + second * sin, first * sin + second * cos], dim=-1)"),
        spares=("rope_shape_dtype", "rope_dtype_device"),
    ),
    mutant("rope", "frequencies_on_the_default_device", (INVERSE_FREQ, INVERSE_FREQ.replace("device=x.device, ", ""))),
    mutant("rope", "no_value_error_for_odd_d", ("    if dim % 2:\n", "    if False:\n")),
    mutant("rope", "returns_float32", ("return turned.flatten(-2).to(x.dtype)", "return turned.flatten(-2)")),
    mutant(
        "rope",
        "rotates_in_place",
        source="""
        def apply_rope(x, positions, base=10000.0):
            dim = x.size(-1)
            if dim % 2:
                raise ValueError("odd feature count")
            inverse_freq = base ** (-torch.arange(0, dim, 2, device=x.device, dtype=torch.float32) / dim)
            angles = positions.to(torch.float32)[:, None] * inverse_freq
            cos, sin = angles.cos(), angles.sin()
            first, second = x[..., 0::2].clone(), x[..., 1::2].clone()
            x[..., 0::2] = (first * cos - second * sin).to(x.dtype)
            x[..., 1::2] = (first * sin + second * cos).to(x.dtype)
            return x
        """,
    ),
    # --- apply_rope: other correct answers ---
    alternative(
        "rope",
        "complex_multiplication",
        """
        def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
            dim = x.shape[-1]
            if dim % 2 != 0:
                raise ValueError(f"need an even number of features, got {dim}")
            freqs = 1.0 / base ** (torch.arange(0, dim, 2, device=x.device).float() / dim)
            angles = torch.outer(positions.float(), freqs)  # (L, D/2)
            rotation = torch.polar(torch.ones_like(angles), angles)
            pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2).contiguous())
            return torch.view_as_real(pairs * rotation).reshape(x.shape).type_as(x)
        """,
    ),
    alternative(
        "rope",
        "rotate_every_two",  # GPT-J's formulation: x * cos + rotate(x) * sin with repeated angles
        """
        def apply_rope(x, positions, base=10000.0):
            d = x.size(-1)
            if d % 2 == 1:
                raise ValueError("odd")
            i = torch.arange(d // 2, device=x.device, dtype=torch.float32)
            theta = torch.exp(-2 * i / d * math.log(base))
            angle = (positions[:, None].float() * theta).repeat_interleave(2, dim=-1)  # (L, D)
            xf = x.float()
            rotated = torch.stack([-xf[..., 1::2], xf[..., 0::2]], dim=-1).flatten(-2)
            return (xf * angle.cos() + rotated * angle.sin()).to(x.dtype)
        """,
    ),
    # --- causal_attention: mistakes ---
    mutant("causal_attention", "top_left_mask", (ALLOWED, ALLOWED.replace("diagonal=k_len - q_len", "diagonal=0"))),
    mutant("causal_attention", "diagonal_blocked", (ALLOWED, ALLOWED.replace("k_len - q_len", "k_len - q_len - 1"))),
    mutant("causal_attention", "offset_the_wrong_way", (ALLOWED, ALLOWED.replace("k_len - q_len", "q_len - k_len"))),
    mutant("causal_attention", "no_scaling", (SCORES, "scores = q @ k.transpose(-2, -1)")),
    mutant("causal_attention", "scaled_by_d_not_sqrt_d", (SCORES, "scores = q @ k.transpose(-2, -1) / q.size(-1)")),
    mutant("causal_attention", "softmax_over_queries", ("scores.softmax(dim=-1) @ v", "scores.softmax(dim=-2) @ v")),
    mutant("causal_attention", "mask_on_the_default_device", (ALLOWED, ALLOWED.replace(", device=q.device", ""))),
    mutant(
        "causal_attention",
        "mask_after_softmax",
        (
            "    scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)\n"
            "    return scores.softmax(dim=-1) @ v",
            "    return scores.softmax(dim=-1).masked_fill(~allowed, 0.0) @ v",
        ),
    ),
    mutant(
        "causal_attention",
        "calls_pytorch_is_causal",
        source="""
        def causal_attention(q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)
        """,
    ),
    mutant(
        "causal_attention",
        "float32_result",
        ("return scores.softmax(dim=-1) @ v", "return scores.float().softmax(dim=-1) @ v.float()"),
    ),
    # --- causal_attention: other correct answers ---
    alternative(
        "causal_attention",
        "arange_comparison_and_where",
        """
        def causal_attention(q, k, v):
            lq, lk, dh = q.shape[-2], k.shape[-2], q.shape[-1]
            query_pos = torch.arange(lk - lq, lk, device=q.device)[:, None]  # (Lq, 1)
            key_pos = torch.arange(lk, device=q.device)[None, :]  # (1, Lk)
            scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * dh**-0.5
            scores = torch.where(key_pos <= query_pos, scores, torch.finfo(scores.dtype).min)
            weights = torch.softmax(scores.float(), dim=-1).to(q.dtype)  # softmax in float32
            return torch.einsum("bhqk,bhkd->bhqd", weights, v)
        """,
    ),
    alternative(
        "causal_attention",
        "loop_over_queries",
        """
        def causal_attention(q, k, v):
            lq, lk = q.size(-2), k.size(-2)
            rows = []
            for i in range(lq):
                visible = lk - lq + i + 1  # the keys this query may read
                scores = q[..., i : i + 1, :] @ k[..., :visible, :].transpose(-2, -1) / q.size(-1) ** 0.5
                rows.append(torch.softmax(scores, dim=-1) @ v[..., :visible, :])
            return torch.cat(rows, dim=-2)
        """,
    ),
    # --- self_attention: mistakes ---
    mutant(
        "self_attention", "positions_restart_at_zero", (POSITIONS, "positions = torch.arange(length, device=x.device)")
    ),
    mutant(
        "self_attention",
        "positions_on_the_default_device",
        (POSITIONS, "positions = torch.arange(past, past + length)"),
    ),
    mutant(
        "self_attention",
        "cache_on_the_batch_axis",
        (CAT_K, "k = torch.cat([cache[0], k], dim=0)"),
        (CAT_V, "v = torch.cat([cache[1], v], dim=0)"),
    ),
    mutant(
        "self_attention",
        "cache_of_row_0_for_every_row",
        (CAT_K, "k = torch.cat([cache[0][:1].expand(batch, -1, -1, -1), k], dim=2)"),
        (CAT_V, "v = torch.cat([cache[1][:1].expand(batch, -1, -1, -1), v], dim=2)"),
    ),
    mutant(
        "self_attention",
        "cache_does_not_grow",
        ("return self.out(merged), (k, v)", "return self.out(merged), (k[:, :, past:], v[:, :, past:])"),
    ),
    mutant(
        "self_attention",
        "caches_keys_before_rope",
        (
            "        q = apply_rope(q, positions, self.rope_base)\n"
            "        k = apply_rope(k, positions, self.rope_base)\n",
            "        q = apply_rope(q, positions, self.rope_base)\n",
        ),
        (
            "        attended = causal_attention(q, k, v)",
            "        every_key = apply_rope(k, torch.arange(past + length, device=x.device), self.rope_base)\n"
            "        attended = causal_attention(q, every_key, v)",
        ),
    ),
    mutant(
        "self_attention",
        "rope_on_queries_only",
        ("        k = apply_rope(k, positions, self.rope_base)\n", ""),
        spares=("self_attention_structure", "self_attention_cache", "self_attention_dtype_device"),
    ),
    mutant(
        "self_attention", "heads_merged_without_transpose", (MERGE, "merged = attended.reshape(batch, length, d_model)")
    ),
    mutant(
        "self_attention",
        "interleaved_qkv_split",
        (SPLIT, SPLIT.replace("3, self.num_heads", "self.num_heads, 3")),
        ("projected.permute(2, 0, 3, 1, 4)", "projected.permute(3, 0, 2, 1, 4)"),
        spares=("self_attention_structure", "self_attention_cache", "self_attention_dtype_device"),
    ),
    mutant(
        "self_attention",
        "past_keys_rotated_again",  # every key rotated after the concatenation: the cached ones turn twice
        ("        k = apply_rope(k, positions, self.rope_base)\n", ""),
        (
            "        attended = causal_attention(q, k, v)",
            "        k = apply_rope(k, torch.arange(k.size(2), device=x.device), self.rope_base)\n"
            "        attended = causal_attention(q, k, v)",
        ),
        spares=("self_attention_structure", "self_attention_values", "self_attention_dtype_device"),
    ),
    mutant(  # the cached step attends in float32 "for precision": a bfloat16 layer then fails at its projection
        "self_attention",
        "cached_step_in_float32",
        (
            CAT_K,
            "q = q.float()\n            k = torch.cat([cache[0].float(), k.float()], dim=2)",
        ),
        (CAT_V, "v = torch.cat([cache[1].float(), v.float()], dim=2)"),
    ),
    mutant(
        "self_attention",
        "projections_with_bias",
        ("nn.Linear(d_model, 3 * d_model, bias=False)", "nn.Linear(d_model, 3 * d_model)"),
    ),
    mutant(
        "self_attention",
        "no_output_projection",
        ("return self.out(merged), (k, v)", "return merged, (k, v)"),
        spares=("self_attention_structure", "self_attention_cache", "self_attention_dtype_device"),
    ),
    # --- self_attention: other correct answers ---
    alternative(
        "self_attention",
        "chunk_and_always_concatenate",
        """
        class CausalSelfAttention(nn.Module):
            def __init__(self, d_model: int, num_heads: int, rope_base: float = 10000.0) -> None:
                super().__init__()
                if d_model % num_heads:
                    raise ValueError(f"d_model ({d_model}) must be a multiple of num_heads ({num_heads})")
                self.num_heads = num_heads
                self.head_dim = d_model // num_heads
                self.rope_base = rope_base
                self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
                self.out = nn.Linear(d_model, d_model, bias=False)

            def _heads(self, t):
                return t.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)  # (B, H, L, Dh)

            def forward(self, x, cache=None):
                b, n, _ = x.shape
                q, k, v = map(self._heads, self.qkv(x).chunk(3, dim=-1))
                if cache is None:  # an empty cache, so that there is one code path
                    empty = k.new_zeros(b, self.num_heads, 0, self.head_dim)
                    cache = (empty, empty)
                start = cache[1].shape[-2]
                pos = start + torch.arange(n, device=x.device)
                keys = torch.cat((cache[0], apply_rope(k, pos, self.rope_base)), dim=-2)
                values = torch.cat((cache[1], v), dim=-2)
                y = causal_attention(apply_rope(q, pos, self.rope_base), keys, values)
                return self.out(y.transpose(1, 2).flatten(2)), (keys, values)
        """,
    ),
    alternative(
        "self_attention",
        "einsum_over_weight_slices",
        """
        class CausalSelfAttention(nn.Module):
            def __init__(self, d_model: int, num_heads: int, rope_base: float = 10000.0) -> None:
                super().__init__()
                if d_model % num_heads:
                    raise ValueError(f"d_model ({d_model}) must be a multiple of num_heads ({num_heads})")
                self.num_heads = num_heads
                self.head_dim = d_model // num_heads
                self.rope_base = rope_base
                self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
                self.out = nn.Linear(d_model, d_model, bias=False)

            def forward(self, x, cache=None):
                w = self.qkv.weight.view(3, self.num_heads, self.head_dim, -1)  # (3, H, Dh, D)
                q, k, v = torch.einsum("bld,thed->tbhle", x, w)  # (B, H, L, Dh) each
                past = cache[0].shape[2] if cache is not None else 0
                positions = torch.arange(x.shape[1], device=x.device) + past
                q = apply_rope(q, positions, self.rope_base)
                k = apply_rope(k, positions, self.rope_base)
                if cache is not None:
                    k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
                o = causal_attention(q, k, v)  # (B, H, L, Dh)
                o = torch.einsum("bhle->lbhe", o).reshape(x.shape[1], x.shape[0], -1).transpose(0, 1)
                return self.out(o), (k, v)
        """,
    ),
    # --- gpt: mistakes ---
    mutant("gpt", "untied_head", (TIE, "")),
    mutant(
        "gpt",
        "head_a_copy_of_the_embedding",
        (TIE, "        self.head.weight = nn.Parameter(self.embed.weight.detach().clone())\n"),
    ),
    mutant(
        "gpt", "tied_head_with_bias", ("nn.Linear(d_model, vocab_size, bias=False)", "nn.Linear(d_model, vocab_size)")
    ),
    mutant("gpt", "no_final_layernorm", (LOGITS, "return self.head(x), new_caches")),
    mutant(
        "gpt",
        "post_ln_blocks",
        (
            "        attended, cache = self.attn(self.norm1(x), cache)  # (B, L, D)\n"
            "        x = x + self.dropout(attended)\n"
            "        x = x + self.dropout(self.ffn(self.norm2(x)))\n",
            "        attended, cache = self.attn(x, cache)\n"
            "        x = self.norm1(x + self.dropout(attended))\n"
            "        x = self.norm2(x + self.dropout(self.ffn(x)))\n",
        ),
    ),
    mutant("gpt", "no_attention_residual", (ATTN_RESIDUAL, "x = self.dropout(attended)")),
    mutant("gpt", "no_feed_forward_residual", (FFN_RESIDUAL, "x = self.dropout(self.ffn(self.norm2(x)))")),
    mutant("gpt", "relu_instead_of_gelu", ("nn.GELU()", "nn.ReLU()")),
    mutant("gpt", "feed_forward_without_bias", ("nn.Linear(d_ff, d_model))", "nn.Linear(d_ff, d_model, bias=False))")),
    mutant(
        "gpt",
        "embedding_scaled_by_sqrt_d",
        ("x = self.dropout(self.embed(ids))", "x = self.dropout(self.embed(ids) * self.embed.embedding_dim**0.5)"),
    ),
    mutant("gpt", "default_embedding_init", ("        nn.init.normal_(self.embed.weight, mean=0.0, std=0.02)\n", "")),
    mutant(
        "gpt",
        "first_cache_for_every_block",
        (
            "for block, cache in zip(self.blocks, caches, strict=True):",
            "for block in self.blocks:\n            cache = caches[0]",
        ),
    ),
    mutant("gpt", "caches_not_returned", (LOGITS, "return self.head(self.norm(x)), caches")),
    mutant(  # caches handed in are widened to float32 "for precision"
        "gpt",
        "caches_widened_to_float32",
        (
            "        if caches is None:\n",
            "        if caches is not None:\n"
            "            caches = [tuple(t.float() for t in cache) for cache in caches]\n"
            "        if caches is None:\n",
        ),
    ),
    # --- gpt: other correct answers ---
    alternative(
        "gpt",
        "named_feed_forward_and_head_tied_the_other_way",
        """
        class FeedForward(nn.Module):
            def __init__(self, d_model, d_ff, dropout):
                super().__init__()
                self.fc_in = nn.Linear(d_model, d_ff)
                self.fc_out = nn.Linear(d_ff, d_model)

            def forward(self, x):
                return self.fc_out(F.gelu(self.fc_in(x)))


        class Block(nn.Module):
            def __init__(self, d_model, num_heads, d_ff, dropout=0.0, rope_base=10000.0):
                super().__init__()
                self.norm1 = nn.LayerNorm(d_model)
                self.attn = CausalSelfAttention(d_model, num_heads, rope_base=rope_base)
                self.norm2 = nn.LayerNorm(d_model)
                self.ffn = FeedForward(d_model, d_ff, dropout)
                self.drop_attn = nn.Dropout(dropout)
                self.drop_ffn = nn.Dropout(dropout)

            def forward(self, x, cache=None):
                h, new_cache = self.attn(self.norm1(x), cache=cache)
                x = x + self.drop_attn(h)
                return x + self.drop_ffn(self.ffn(self.norm2(x))), new_cache


        class GPT(nn.Module):
            def __init__(self, vocab_size, d_model, num_heads, num_layers, d_ff, dropout=0.0, rope_base=10000.0):
                super().__init__()
                self.head = nn.Linear(d_model, vocab_size, bias=False)
                self.embed = nn.Embedding(vocab_size, d_model)
                self.embed.weight = self.head.weight  # tied, the other way round
                nn.init.normal_(self.embed.weight, std=0.02)
                self.drop = nn.Dropout(dropout)
                self.blocks = nn.ModuleList(
                    Block(d_model, num_heads, d_ff, dropout, rope_base) for _ in range(num_layers)
                )
                self.norm = nn.LayerNorm(d_model)

            def forward(self, ids, caches=None):
                x = self.drop(self.embed(ids))
                out = []
                for i, block in enumerate(self.blocks):
                    x, c = block(x, caches[i] if caches is not None else None)
                    out.append(c)
                return F.linear(self.norm(x), self.embed.weight), out
        """,
    ),
    alternative(
        "gpt",
        "named_sequential_and_index_loop",
        """
        from collections import OrderedDict


        class Block(nn.Module):
            def __init__(self, d_model, num_heads, d_ff, dropout=0.0, rope_base=10000.0):
                super().__init__()
                self.attn = CausalSelfAttention(d_model, num_heads, rope_base)
                self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
                layers = OrderedDict(up=nn.Linear(d_model, d_ff), act=nn.GELU(), down=nn.Linear(d_ff, d_model))
                self.ffn = nn.Sequential(layers)
                self.attn_drop, self.ffn_drop = nn.Dropout(dropout), nn.Dropout(dropout)

            def forward(self, x, cache=None):
                out, cache = self.attn(self.norm1(x), cache)
                h = x + self.attn_drop(out)
                return h + self.ffn_drop(self.ffn(self.norm2(h))), cache


        class GPT(nn.Module):
            def __init__(self, vocab_size, d_model, num_heads, num_layers, d_ff, dropout=0.0, rope_base=10000.0):
                super().__init__()
                self.embed = nn.Embedding(vocab_size, d_model)
                with torch.no_grad():
                    self.embed.weight.normal_(0.0, 0.02)
                self.emb_drop = nn.Dropout(dropout)
                self.blocks = nn.ModuleList()
                for _ in range(num_layers):
                    self.blocks.append(Block(d_model, num_heads, d_ff, dropout, rope_base))
                self.norm = nn.LayerNorm(d_model)
                self.head = nn.Linear(d_model, vocab_size, bias=False)
                self.head.weight = self.embed.weight

            def forward(self, ids, caches=None):
                h = self.emb_drop(self.embed(ids))
                caches = caches or [None] * len(self.blocks)
                new = []
                for i in range(len(self.blocks)):
                    h, c = self.blocks[i](h, caches[i])
                    new.append(c)
                return self.head(self.norm(h)), new
        """,
    ),
    # --- generate: mistakes ---
    mutant("generate", "temperature_multiplies", (DIVIDE, "last = last * temperature")),
    mutant("generate", "top_k_fills_zero", (TOP_K_FILL, "last = last.masked_fill(last < kth_largest, 0.0)")),
    mutant(
        "generate",
        "top_k_on_probabilities_then_softmax_again",
        (TOP_K_FILL, "last = last.softmax(dim=-1).masked_fill(last < kth_largest, 0.0)"),
    ),
    mutant(
        "generate",
        "top_k_keeps_one_too_many",
        (KTH, "kth_largest = last.kthvalue(last.size(-1) - top_k, dim=-1, keepdim=True).values"),
    ),
    mutant(
        "generate",
        "top_k_over_the_batch",
        (KTH, "kth_largest = last.topk(min(top_k, last.size(0)), dim=0).values[-1:]"),
    ),
    mutant("generate", "first_position_logits", ("last = logits[:, -1].float()", "last = logits[:, 0].float()")),
    mutant("generate", "whole_sequence_fed_with_the_cache", (CACHED_CALL, "logits, caches = model(sequence, caches)")),
    mutant(
        "generate", "generator_ignored", (SAMPLE, "next_token = torch.multinomial(last.softmax(dim=-1), num_samples=1)")
    ),
    mutant("generate", "gradients_on", ("    with torch.no_grad():\n", "    if True:\n")),
    mutant("generate", "no_greedy_branch", ("            if temperature == 0:\n", "            if False:\n")),
    mutant(  # reads the caches as the GPT's list of (keys, values) and detaches them: not every model's caches are
        "generate",
        "caches_read_as_key_value_pairs",
        (
            CACHED_CALL,
            "logits, caches = model(step_input, caches)\n"
            "                if isinstance(caches, list):\n"
            "                    caches = [(keys.detach(), values.detach()) for keys, values in caches]",
        ),
    ),
    mutant(
        "generate",
        "one_draw_for_the_whole_batch",
        (
            SAMPLE,
            "next_token = torch.multinomial(last.softmax(dim=-1)[:1], num_samples=1, generator=generator)"
            ".expand(last.size(0), 1)",
        ),
    ),
    mutant(
        "generate",
        "switches_to_eval",
        (
            "    sequence, step_input, caches = prompt, prompt, None\n",
            "    model.eval()\n    sequence, step_input, caches = prompt, prompt, None\n",
        ),
        spares=("generate_shape", "generate_cache", "generate_greedy", "generate_top_k"),
    ),
    mutant(
        "generate",
        "top_k_drops_ties",  # exactly k tokens kept: a token tied with the k-th largest is dropped
        (KTH, "top = last.topk(top_k, dim=-1)"),
        (TOP_K_FILL, 'last = torch.full_like(last, float("-inf")).scatter(-1, top.indices, top.values)'),
        spares=("generate_shape", "generate_cache", "generate_greedy", "generate_keeps_mode"),
    ),
    mutant(
        "generate",
        "samples_in_the_model_dtype",  # a bfloat16 model's logits divided, cut and softmaxed in bfloat16
        ("last = logits[:, -1].float()", "last = logits[:, -1]"),
        spares=("generate_shape", "generate_cache", "generate_greedy", "generate_keeps_mode"),
    ),
    mutant(
        "generate",
        "divides_before_the_cast",  # float32 from the softmax on, but the division by the temperature rounds
        ("last = logits[:, -1].float()", "last = logits[:, -1]"),
        (DIVIDE, "last = (last / temperature).float()"),
        spares=("generate_shape", "generate_cache", "generate_greedy", "generate_keeps_mode"),
    ),
    mutant(
        "generate",
        "returns_only_the_new_tokens",
        ("    return sequence\n", "    return sequence[:, prompt.size(1) :]\n"),
    ),
    mutant(
        "generate",
        "output_preallocated_on_the_default_device",
        source="""
        def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
            batch, start = prompt.shape
            sequence = torch.zeros(batch, start + max_new_tokens, dtype=torch.long)  # no device=: the default one
            sequence[:, :start] = prompt
            caches = None
            with torch.no_grad():
                for t in range(start, start + max_new_tokens):
                    if use_cache:
                        logits, caches = model(sequence[:, :t] if caches is None else sequence[:, t - 1 : t], caches)
                    else:
                        logits, _ = model(sequence[:, :t])
                    last = logits[:, -1].float()  # (B, V)
                    if temperature == 0:
                        sequence[:, t] = last.argmax(dim=-1)
                        continue
                    last = last / temperature
                    if top_k is not None:
                        last = last.masked_fill(last < last.topk(top_k, dim=-1).values[:, -1:], float("-inf"))
                    sequence[:, t] = torch.multinomial(last.softmax(dim=-1), 1, generator=generator)[:, 0]
            return sequence
        """,
        spares=("generate_cache", "generate_greedy", "generate_top_k", "generate_keeps_mode"),
    ),
    # --- generate: other correct answers ---
    alternative(
        "generate",
        "gumbel_max_and_preallocated_output",
        """
        @torch.no_grad()
        def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
            batch, start = prompt.shape
            out = prompt.new_empty(batch, start + max_new_tokens)
            out[:, :start] = prompt
            caches = None
            for t in range(start, start + max_new_tokens):
                if use_cache:
                    logits, caches = model(out[:, :t] if caches is None else out[:, t - 1 : t], caches)
                else:
                    logits, _ = model(out[:, :t])
                z = logits[:, -1, :].float()
                if temperature == 0:
                    out[:, t] = z.argmax(-1)
                    continue
                z = z / temperature
                if top_k is not None:
                    z = torch.where(z < torch.topk(z, top_k).values[:, [-1]], torch.full_like(z, float("-inf")), z)
                gumbel = -torch.empty_like(z).exponential_(generator=generator).log()  # Gumbel-max: exact sampling
                out[:, t] = (z + gumbel).argmax(-1)
            return out
        """,
    ),
    alternative(
        "generate",
        "sorted_top_k_and_inverse_cdf",
        """
        def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, use_cache=True, generator=None):
            ids = prompt
            feed, caches = prompt, None
            for _ in range(max_new_tokens):
                with torch.no_grad():
                    logits, new_caches = model(feed, caches) if use_cache else model(ids, None)
                if use_cache:
                    caches = new_caches
                scores = logits[:, -1].to(torch.float32)
                if temperature == 0:
                    choice = scores.argmax(dim=1)
                else:
                    scores = scores / temperature
                    if top_k is not None:
                        ordered, _ = scores.sort(dim=-1, descending=True)
                        scores = scores.masked_fill(scores < ordered[:, top_k - 1 : top_k], float("-inf"))
                    cdf = torch.softmax(scores, dim=-1).cumsum(dim=-1)
                    u = torch.rand(scores.size(0), 1, generator=generator, device=scores.device)
                    choice = torch.searchsorted(cdf, u).squeeze(1).clamp(max=scores.size(-1) - 1)
                ids = torch.cat((ids, choice[:, None]), dim=1)
                feed = choice[:, None]
            return ids
        """,
    ),
    # --- extra_credit_gqa (extra credit): mistakes ---
    mutant(
        "extra_credit_gqa",
        "widened_before_caching",  # the same outputs, and the whole cache: the saving is lost
        (GQA_CACHE_IF, GQA_WIDEN + GQA_CACHE_IF),
        (GQA_ATTEND, "attended = causal_attention(q, k, v)"),
    ),
    mutant(
        "extra_credit_gqa",
        "groups_cycled_with_repeat",  # head h reads key/value head h % G instead of h // (H / G)
        (GQA_ATTEND, "attended = causal_attention(q, k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1))"),
    ),
    mutant(
        "extra_credit_gqa",
        "positions_restart_at_zero",
        (GQA_POSITIONS, "positions = torch.arange(length, device=x.device)  # (L,)"),
    ),
    mutant(
        "extra_credit_gqa",
        "values_first_in_kv",
        ("k, v = kv.permute(2, 0, 3, 1, 4)", "v, k = kv.permute(2, 0, 3, 1, 4)"),
    ),
    mutant(
        "extra_credit_gqa",
        "positions_on_the_default_device",
        (GQA_POSITIONS, GQA_POSITIONS.replace(", device=x.device", "")),
    ),
    mutant(
        "extra_credit_gqa",
        "cache_holds_unrotated_keys",  # the same outputs: every call turns the whole cache again, from position 0
        ("k = apply_rope(k, positions, self.rope_base)\n        ", ""),
        (GQA_ATTEND, "all_positions = torch.arange(past + length, device=x.device)\n        "
                     "attended = causal_attention(q, apply_rope(k, all_positions, self.rope_base)"
                     ".repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1))"),
    ),
    mutant(
        "extra_credit_gqa",
        "no_value_error_for_a_non_divisor",
        ("if not 1 <= num_kv_heads <= num_heads or num_heads % num_kv_heads:", "if num_kv_heads < 1:"),
    ),
    mutant(
        "extra_credit_gqa",
        "no_value_error_for_a_negative_count",  # -1 divides 4: nn.Linear then fails on a negative size
        ("if not 1 <= num_kv_heads <= num_heads or num_heads % num_kv_heads:",
         "if num_kv_heads == 0 or num_heads % num_kv_heads:"),
    ),
    mutant(
        "extra_credit_gqa",
        "strided_views_of_a_widened_cache",  # G heads in the shape, all H in the storage behind them
        (GQA_ATTEND, "k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)\n        "
                     "attended = causal_attention(q, k, v)"),
        ("return self.out(merged), (k, v)", "return self.out(merged), (k[:, ::group], v[:, ::group])"),
    ),
    mutant(
        "extra_credit_gqa",
        "output_in_float32",
        ("return self.out(merged), (k, v)", "return self.out(merged).float(), (k, v)"),
    ),
    # --- extra_credit_gqa: other correct answers ---
    alternative(
        "extra_credit_gqa",
        "groups_as_a_broadcast_axis",  # no copy of the keys at all: the group is an axis of its own, own softmax
        """
        class GroupedQueryAttention(nn.Module):
            def __init__(self, d_model, num_heads, num_kv_heads, rope_base=10000.0):
                super().__init__()
                if d_model % num_heads:
                    raise ValueError("d_model must be a multiple of num_heads")
                self.num_heads = num_heads
                self.head_dim = d_model // num_heads
                self.rope_base = rope_base
                if num_kv_heads not in [g for g in range(1, num_heads + 1) if num_heads % g == 0]:
                    raise ValueError("num_kv_heads must divide num_heads")
                self.num_kv_heads = num_kv_heads
                self.q = nn.Linear(d_model, d_model, bias=False)
                self.kv = nn.Linear(d_model, 2 * num_kv_heads * self.head_dim, bias=False)
                self.out = nn.Linear(d_model, d_model, bias=False)

            def forward(self, x, cache=None):
                b, n, d = x.shape
                g, dh = self.num_kv_heads, self.head_dim
                start = cache[0].shape[-2] if cache is not None else 0
                where = torch.arange(n, device=x.device) + start
                q = apply_rope(self.q(x).unflatten(-1, (self.num_heads, dh)).transpose(1, 2), where, self.rope_base)
                keys, values = self.kv(x).unflatten(-1, (2, g, dh)).unbind(2)  # (B, L, G, Dh) each
                keys = apply_rope(keys.transpose(1, 2), where, self.rope_base)
                values = values.transpose(1, 2)
                if cache is not None:
                    keys, values = torch.cat((cache[0], keys), 2), torch.cat((cache[1], values), 2)
                grouped_q = q.unflatten(1, (g, self.num_heads // g))  # (B, G, H/G, L, Dh)
                scores = grouped_q @ keys.unsqueeze(2).transpose(-2, -1) / dh**0.5  # (B, G, H/G, L, P + L)
                total = keys.shape[-2]
                allowed = torch.ones(n, total, dtype=torch.bool, device=x.device).tril(total - n)
                scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
                attended = scores.softmax(dim=-1) @ values.unsqueeze(2)  # (B, G, H/G, L, Dh)
                merged = attended.flatten(1, 2).permute(0, 2, 1, 3).reshape(b, n, d)
                return self.out(merged), (keys, values)
        """,
    ),
    Variant(
        "extra_credit_gqa",
        "expand_then_reshape",
        "alternative",
        ((GQA_ATTEND, "attended = causal_attention(q, *(t[:, :, None].expand(-1, -1, group, -1, -1).flatten(1, 2) "
                     "for t in (k, v)))"),),
    ),
]

# --- Issue 51: answers gamed to pass the visible tests; the hidden tests fail each ---
GQA_PAST = "past = 0 if cache is None else cache[0].size(2)"
GQA_RETURN = "return self.out(merged), (k, v)"
VARIANTS += [
    mutant(
        "self_attention",
        "empty_cache_on_the_default_device",  # the first call's empty cache: the visible test steps with a cache
        ("past = 0 if cache is None else cache[0].size(2)",
         "if cache is None:\n            "
         "empty = torch.zeros(batch, self.num_heads, 0, self.head_dim, dtype=x.dtype)\n            "
         "cache = (empty, empty)\n        past = cache[0].size(2)"),
        spares=("self_attention_structure", "self_attention_values", "self_attention_cache"),
    ),
    mutant(
        "rope",
        "float32_unless_bfloat16",  # float64 and float16 come back float32
        ("return turned.flatten(-2).to(x.dtype)",
         "return turned.flatten(-2).to(torch.bfloat16 if x.dtype == torch.bfloat16 else torch.float32)"),
        spares=("rope_values", "rope_properties", "rope_dtype_device"),
    ),
    mutant(
        "extra_credit_gqa",
        "first_call_views_of_a_widened_cache",  # strided views of the H widened heads, on the first call only
        (GQA_ATTEND, "k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)\n        "
                     "attended = causal_attention(q, k, v)"),
        (GQA_RETURN, "k, v = k[:, ::group], v[:, ::group]\n        "
                     "return self.out(merged), (k, v) if cache is None else (k.contiguous(), v.contiguous())"),
    ),
    mutant(
        "extra_credit_gqa",
        "float32_cast_back_for_bfloat16_only",  # float64 and float16 come back float32
        (GQA_RETURN, "out = self.out(merged).float()\n        "
                     "return (out.bfloat16() if x.dtype == torch.bfloat16 else out), (k, v)"),
    ),
    mutant(
        "extra_credit_gqa",
        "empty_cache_on_the_default_device",  # the first call's empty cache: the visible test steps with a cache
        (GQA_PAST, "if cache is None:\n            "
                   "empty = torch.zeros(batch, self.num_kv_heads, 0, self.head_dim, dtype=x.dtype)\n            "
                   "cache = (empty, empty)\n        past = cache[0].size(2)"),
    ),
    mutant(
        "extra_credit_gqa",
        "positions_on_the_cpu",  # a fixed device: right wherever x is on the CPU
        (GQA_POSITIONS, GQA_POSITIONS.replace("device=x.device", 'device="cpu"')),
    ),
]
