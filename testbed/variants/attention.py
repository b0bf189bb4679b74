"""Variants of the answers of 01_attention: realistic mistakes (mutants) and other correct answers."""

from testbed.variants.spec import Blame, alternative, mutant

ASSIGNMENT = "01_attention"

SCALE = ("/ math.sqrt(d_k)", "")
FILL = "torch.finfo(scores.dtype).min"
MASK_THEN_SOFTMAX = (
    "    if mask is not None:\n"
    "        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)\n"
    "    weights = scores.softmax(dim=-1)  # (..., Lq, Lk)\n"
)
DROPOUT_THEN_OUTPUT = "        weights = dropout(weights)\n    output = weights @ value  # (..., Lq, Dv)\n"

VARIANTS = [
    # --- scaled_dot_product_attention: mistakes ---
    mutant("sdpa", "no_scaling", SCALE),
    mutant("sdpa", "scale_by_d_k", ("math.sqrt(d_k)", "d_k")),
    mutant("sdpa", "d_k_read_from_value", ("d_k = query.size(-1)", "d_k = value.size(-1)")),
    mutant("sdpa", "softmax_over_queries", ("softmax(dim=-1)", "softmax(dim=-2)")),
    mutant("sdpa", "transpose_fixed_axes", ("key.transpose(-2, -1)", "key.transpose(1, 2)")),
    mutant(
        "sdpa",
        "mask_after_softmax",
        (
            MASK_THEN_SOFTMAX,
            "    weights = scores.softmax(dim=-1)\n"
            "    if mask is not None:\n"
            "        weights = weights.masked_fill(~mask, 0.0)\n",
        ),
    ),
    mutant(
        "sdpa",
        "scores_masked_after_the_softmax",  # the mask reaches the scores once the weights are computed: no effect
        (
            MASK_THEN_SOFTMAX,
            "    weights = scores.softmax(dim=-1)  # (..., Lq, Lk)\n"
            "    if mask is not None:\n"
            "        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)\n",
        ),
    ),
    mutant("sdpa", "mask_convention_inverted", ("masked_fill(~mask,", "masked_fill(mask,")),
    mutant("sdpa", "fill_minus_inf", (FILL, 'float("-inf")')),
    mutant("sdpa", "fill_minus_1e9", (FILL, "-1e9")),
    mutant("sdpa", "fill_float32_min", (FILL, "torch.finfo(torch.float32).min")),
    mutant("sdpa", "fill_zero", (FILL, "0.0")),
    mutant(
        "sdpa",
        "fill_tensor_on_cpu",
        (
            "scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)",
            "scores = torch.where(mask, scores, torch.full(scores.shape, torch.finfo(scores.dtype).min, "
            "dtype=scores.dtype))",
        ),
    ),
    mutant(
        "sdpa",
        "computes_in_float32",
        (
            "d_k = query.size(-1)",
            "query, key, value = query.float(), key.float(), value.float()\n    d_k = query.size(-1)",
        ),
    ),
    mutant(
        "sdpa",
        "returns_weights_before_dropout",
        (DROPOUT_THEN_OUTPUT, "        return dropout(weights) @ value, weights\n    output = weights @ value\n"),
    ),
    mutant(
        "sdpa",
        "dropout_on_output",
        (DROPOUT_THEN_OUTPUT, "        return dropout(weights @ value), weights\n    output = weights @ value\n"),
    ),
    mutant("sdpa", "dropout_ignored", ("        weights = dropout(weights)\n", "        pass\n")),
    mutant("sdpa", "scale_tensor_on_the_default_device", (SCALE[0], "/ torch.tensor(d_k, dtype=query.dtype).sqrt()")),
    mutant(  # the float mask of Hugging Face models: finfo.min added, so a blocked NaN or inf stays in the score
        "sdpa",
        "mask_added_to_the_scores",
        (
            "scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)",
            "scores = scores + (~mask).to(scores.dtype) * torch.finfo(scores.dtype).min",
        ),
    ),
    mutant(  # masking by arithmetic: a blocked inf times 0 is NaN
        "sdpa",
        "mask_multiplied_into_the_scores",
        (
            "scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)",
            "blocked = (~mask).to(scores.dtype)\n"
            "        scores = scores * (1 - blocked) + blocked * torch.finfo(scores.dtype).min",
        ),
    ),
    mutant(  # the visible tests' bfloat16 comes back; float16 comes back float32
        "sdpa",
        "float32_cast_back_for_bfloat16_only",
        (
            "d_k = query.size(-1)",
            "dtype = query.dtype\n    query, key, value = query.float(), key.float(), value.float()\n"
            "    d_k = query.size(-1)",
        ),
        (
            "    return output, weights\n",
            "    if dtype == torch.bfloat16:\n        return output.bfloat16(), weights.bfloat16()\n"
            "    return output, weights\n",
        ),
    ),
    mutant(
        "sdpa",
        "fully_masked_rows_zeroed",
        (
            MASK_THEN_SOFTMAX,
            "    if mask is not None:\n"
            '        scores = scores.masked_fill(~mask, float("-inf"))\n'
            "    weights = scores.softmax(dim=-1).nan_to_num(0.0)  # a fully masked row: all zeros\n",
        ),
    ),
    mutant(
        "sdpa",
        "output_from_the_builtin",
        source="""
        def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
            scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
            if mask is not None:
                scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
            weights = scores.softmax(dim=-1)
            if dropout is not None:
                weights = dropout(weights)
                return weights @ value, weights
            return F.scaled_dot_product_attention(query, key, value, attn_mask=mask), weights
        """,
    ),
    # --- scaled_dot_product_attention: other correct answers ---
    alternative(
        "sdpa",
        "einsum_and_where",
        """
        def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
            scores = torch.einsum("...qd,...kd->...qk", query, key) * query.shape[-1] ** -0.5
            if mask is not None:
                scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)
            weights = F.softmax(scores, dim=-1)
            if dropout:
                weights = dropout(weights)
            return torch.einsum("...qk,...kd->...qd", weights, value), weights
        """,
    ),
    alternative(
        "sdpa",
        "loop_over_batch",
        """
        def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
            *lead, lq, dk = query.shape
            lk = key.shape[-2]
            q = query.reshape(-1, lq, dk)
            k = key.reshape(-1, lk, dk)
            keep = mask if mask is not None else torch.ones(lq, lk, dtype=torch.bool, device=query.device)
            keep = keep.expand(*lead, lq, lk).reshape(-1, lq, lk)
            rows = []
            for b in range(q.shape[0]):
                s = q[b] @ k[b].t() / dk**0.5
                s = s.masked_fill(keep[b].logical_not(), torch.finfo(s.dtype).min)
                rows.append(torch.softmax(s, dim=-1))
            weights = torch.stack(rows).reshape(*lead, lq, lk)
            if dropout is not None:
                weights = dropout(weights)
            return weights @ value, weights
        """,
    ),
    alternative(
        "sdpa",
        "scaled_query_and_manual_softmax",
        """
        def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
            scores = (query / math.sqrt(query.shape[-1])) @ key.mT
            if mask is not None:
                scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
            scores = scores - scores.max(dim=-1, keepdim=True).values
            weights = scores.exp()
            weights = weights / weights.sum(dim=-1, keepdim=True)
            if dropout is not None:
                weights = dropout(weights)
            return torch.matmul(weights, value), weights
        """,
    ),
    alternative(
        "sdpa",
        "branches_on_fully_masked_rows",
        """
        def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):
            scores = query @ key.mT / math.sqrt(query.size(-1))
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
                blocked = (~mask).all(dim=-1, keepdim=True)  # queries that may attend to no key
                if blocked.any():  # reads the data: give those rows equal scores, hence uniform weights
                    scores = scores.masked_fill(blocked, 0.0)
            weights = scores.softmax(dim=-1)
            if dropout is not None:
                weights = dropout(weights)
            return weights @ value, weights
        """,
    ),
    # --- causal_mask ---
    mutant("causal_mask", "upper_triangle", (".tril()", ".triu()")),
    mutant("causal_mask", "diagonal_blocked", (".tril()", ".tril(diagonal=-1)")),
    mutant("causal_mask", "float_not_bool", ("dtype=torch.bool, ", "")),
    mutant("causal_mask", "device_ignored", (", device=device", "")),
    mutant("causal_mask", "true_means_blocked", (".tril()", ".triu(diagonal=1)")),
    alternative(
        "causal_mask",
        "arange_comparison",
        """
        def causal_mask(size, device=None):
            positions = torch.arange(size, device=device)
            return positions[None, :] <= positions[:, None]
        """,
    ),
    alternative(
        "causal_mask",
        "python_loops",
        """
        def causal_mask(size, device=None):
            rows = [[j <= i for j in range(size)] for i in range(size)]
            return torch.tensor(rows, dtype=torch.bool, device=device)
        """,
    ),
    # --- padding_mask ---
    mutant("padding_mask", "no_broadcast_axes", ("[:, None, None, :]", "")),
    mutant("padding_mask", "axes_in_wrong_place", ("[:, None, None, :]", "[:, None, :, None]")),
    mutant("padding_mask", "true_means_padding", ("!=", "==")),
    mutant("padding_mask", "pad_id_hard_coded_zero", ("token_ids != pad_idx", "token_ids != 0")),
    mutant("padding_mask", "integer_not_bool", ("(token_ids != pad_idx)[", "(token_ids != pad_idx).long()[")),
    alternative(
        "padding_mask",
        "ne_and_unsqueeze",
        """
        def padding_mask(token_ids, pad_idx):
            return token_ids.ne(pad_idx).unsqueeze(1).unsqueeze(2)
        """,
    ),
    alternative(
        "padding_mask",
        "where_and_view",
        """
        def padding_mask(token_ids, pad_idx):
            batch, length = token_ids.shape
            return torch.where(token_ids == pad_idx, False, True).view(batch, 1, 1, length)
        """,
    ),
]

# padding_mask_broadcast runs scaled_dot_product_attention with the student's padding_mask: a wrong
# attention with a correct mask is told the mask is correct, a wrong mask is told to check the mask.
ATTENTION_AT_FAULT = ("padding_mask is correct", "the mask's shape")
MASK_AT_FAULT = ("the mask's shape (B, 1, 1, L)", "scaled_dot_product_attention")
BLAMES = [
    *(
        Blame(f"sdpa-mutant-{name}", "padding_mask_broadcast", *ATTENTION_AT_FAULT)
        for name in ("scores_masked_after_the_softmax", "fill_zero", "mask_convention_inverted")
    ),
    *(
        Blame(f"padding_mask-mutant-{name}", "padding_mask_broadcast", *MASK_AT_FAULT)
        for name in ("no_broadcast_axes", "axes_in_wrong_place", "true_means_padding")
    ),
    Blame(
        "padding_mask-mutant-integer_not_bool",
        "padding_mask_broadcast",
        "padding_mask should have dtype torch.bool",
        "scaled_dot_product_attention",
    ),
]

# Issue 51: sdpa_mask checks the attention without a mask first, so an attention that is off (unscaled, softmax
# over the queries) is told so, and a mask mistake still hears about the mask.
ATTENTION_ITSELF = ("scaled_dot_product_attention itself is off", "the mask must change the scores")
BLAMES += [
    *(Blame(f"sdpa-mutant-{name}", "sdpa_mask", *ATTENTION_ITSELF) for name in ("no_scaling", "softmax_over_queries")),
    Blame("sdpa-mutant-scores_masked_after_the_softmax", "sdpa_mask", "fill the scores where the mask is False",
          "scaled_dot_product_attention itself is off"),
    # A (B, L) mask met an IndexError in padding_mask_values; it is told the shape a padding mask has.
    Blame("padding_mask-mutant-no_broadcast_axes", "padding_mask_values", "a padding mask has 4 axes, (B, 1, 1, L)",
          "IndexError"),
]
