"""Variants of the answers of 05_encoder_decoder: realistic mistakes (mutants) and other correct answers."""

from testbed.variants.spec import alternative, mutant

ASSIGNMENT = "05_encoder_decoder"

# Lines of the reference answers that several mutants change.
PRE_SELF = (
    "            attended, self_weights = self.self_attn(normed, normed, normed, tgt_mask)  # (B, T, D), (B, H, T, T)\n"
)
POST_SELF = "            attended, self_weights = self.self_attn(x, x, x, tgt_mask)  # (B, T, D), (B, H, T, T)\n"
PRE_CROSS = "self.cross_attn(self.norm2(x), memory, memory, memory_mask)"
POST_CROSS = "self.cross_attn(x, memory, memory, memory_mask)"
POST_NORM1 = "x = self.norm1(x + self.dropout1(attended))"
POST_NORM2 = "x = self.norm2(x + self.dropout2(attended))"
POST_NORM3 = "x = self.norm3(x + self.dropout3(self.ffn(x)))"
PRE_FFN = "x = x + self.dropout3(self.ffn(self.norm3(x)))"
TGT_MASK = "tgt_mask = target_mask(tgt_in, self.pad_idx)  # (B, 1, T, T)"
MEMORY_MASK = "memory_mask = (src != self.pad_idx)[:, None, None, :]  # (B, 1, 1, S)"
FILL_PAD = "            next_token = next_token.masked_fill(finished, model.pad_idx)\n"
MARK_FINISHED = "            finished |= next_token == eos_idx\n"
FFN = (
    "        self.ffn = nn.Sequential(\n"
    "            OrderedDict(\n"
    "                [\n"
    '                    ("linear1", nn.Linear(d_model, d_ff)),\n'
    '                    ("relu", nn.ReLU()),\n'
    '                    ("dropout", nn.Dropout(dropout)),\n'
    '                    ("linear2", nn.Linear(d_ff, d_model)),\n'
    "                ]\n"
    "            )\n"
    "        )\n"
)
APPEND = "            ys = torch.cat([ys, next_token[:, None]], dim=1)  # (B, t + 1)\n"

VARIANTS = [
    # --- shift_right: mistakes ---
    mutant("shift_right", "drops_first_token", ("tgt[:, :-1]", "tgt[:, 1:]")),
    mutant(
        "shift_right",
        "bos_appended_at_the_end",
        ("torch.cat([bos, tgt[:, :-1]], dim=1)", "torch.cat([tgt[:, 1:], bos], dim=1)"),
    ),
    mutant("shift_right", "keeps_the_last_token", ("tgt[:, :-1]", "tgt")),
    mutant(
        "shift_right",
        "roll_without_bos",
        source="""
        def shift_right(tgt, bos_idx):
            return tgt.roll(1, dims=1)
        """,
    ),
    mutant(
        "shift_right",
        "float_bos_column",
        ("torch.full_like(tgt[:, :1], bos_idx)", "torch.full((tgt.size(0), 1), bos_idx)"),
    ),
    mutant(
        "shift_right",
        "bos_column_on_the_cpu",
        ("torch.full_like(tgt[:, :1], bos_idx)", "torch.full((tgt.size(0), 1), bos_idx, dtype=tgt.dtype)"),
    ),
    mutant(
        "shift_right",
        "in_place",
        source="""
        def shift_right(tgt, bos_idx):
            tgt[:, 1:] = tgt[:, :-1].clone()
            tgt[:, 0] = bos_idx
            return tgt
        """,
        spares=("shift_right_dtype_device",),
    ),
    mutant(  # "a LongTensor", read as a fixed dtype: int32 ids come back int64
        "shift_right",
        "bos_column_long_whatever_the_ids",
        ("torch.full_like(tgt[:, :1], bos_idx)", "torch.full_like(tgt[:, :1], bos_idx, dtype=torch.long)"),
    ),
    mutant(
        "shift_right",
        "shifts_the_batch_axis",
        source="""
        def shift_right(tgt, bos_idx):
            bos = torch.full_like(tgt[:1], bos_idx)
            return torch.cat([bos, tgt[:-1]], dim=0)
        """,
    ),
    # --- shift_right: other correct answers ---
    alternative(
        "shift_right",
        "pad",
        """
        def shift_right(tgt, bos_idx):
            return F.pad(tgt[:, :-1], (1, 0), value=bos_idx)
        """,
    ),
    alternative(
        "shift_right",
        "roll_then_assign",
        """
        def shift_right(tgt: torch.Tensor, bos_idx: int) -> torch.Tensor:
            shifted = torch.roll(tgt, shifts=1, dims=-1)  # a new tensor
            shifted[:, 0] = bos_idx
            return shifted
        """,
    ),
    alternative(
        "shift_right",
        "new_empty",
        """
        def shift_right(tgt, bos_idx):
            out = tgt.new_empty(tgt.shape)
            out[:, 0] = bos_idx
            out[:, 1:] = tgt[:, :-1]
            return out
        """,
    ),
    # --- target_mask: mistakes ---
    mutant(
        "target_mask",
        "causal_only",
        ("return not_pad & causal", "return causal.expand(tgt_in.size(0), 1, length, length)"),
    ),
    mutant(
        "target_mask",
        "padding_only",
        ("return not_pad & causal", "return not_pad.expand(tgt_in.size(0), 1, length, length)"),
    ),
    mutant("target_mask", "upper_triangle", (".tril()", ".triu()")),
    mutant("target_mask", "diagonal_blocked", (".tril()", ".tril(diagonal=-1)")),
    mutant("target_mask", "padding_on_the_queries", ("[:, None, None, :]", "[:, None, :, None]")),
    mutant("target_mask", "or_instead_of_and", ("not_pad & causal", "not_pad | causal")),
    mutant("target_mask", "padding_convention_inverted", ("tgt_in != pad_idx", "tgt_in == pad_idx")),
    mutant("target_mask", "causal_on_the_cpu", (", device=tgt_in.device", "")),
    mutant("target_mask", "float_mask", ("return not_pad & causal", "return (not_pad & causal).float()")),
    # --- target_mask: other correct answers ---
    alternative(
        "target_mask",
        "causal_alone_when_no_padding",  # reads the ids: cannot run on the meta device
        """
        def target_mask(tgt_in, pad_idx):
            batch, length = tgt_in.shape
            causal = torch.ones(length, length, dtype=torch.bool, device=tgt_in.device).tril()
            is_pad = tgt_in == pad_idx
            if not is_pad.any():  # no padding anywhere: the causal mask alone
                return causal.expand(batch, 1, length, length)
            return causal & ~is_pad[:, None, None, :]
        """,
    ),
    alternative(
        "target_mask",
        "arange_comparison",
        """
        def target_mask(tgt_in, pad_idx):
            batch, length = tgt_in.shape
            positions = torch.arange(length, device=tgt_in.device)
            causal = positions[None, :] <= positions[:, None]
            keep = tgt_in.ne(pad_idx).view(batch, 1, 1, length)
            return torch.logical_and(keep, causal)
        """,
    ),
    alternative(
        "target_mask",
        "loop_over_queries",
        """
        def target_mask(tgt_in: torch.Tensor, pad_idx: int) -> torch.Tensor:
            batch, length = tgt_in.shape
            mask = (tgt_in != pad_idx).view(batch, 1, 1, length).repeat(1, 1, length, 1)
            for i in range(length):
                mask[:, :, i, i + 1 :] = False
            return mask
        """,
    ),
    # --- decoder_layer: mistakes ---
    mutant(
        "decoder_layer",
        "cross_attention_on_x",
        (POST_CROSS, "self.cross_attn(x, x, x, memory_mask)"),
        (PRE_CROSS, "self.cross_attn(self.norm2(x), self.norm2(x), self.norm2(x), memory_mask)"),
    ),
    mutant(
        "decoder_layer",
        "memory_mask_ignored",
        (POST_CROSS, "self.cross_attn(x, memory, memory)"),
        (PRE_CROSS, "self.cross_attn(self.norm2(x), memory, memory)"),
    ),
    mutant(
        "decoder_layer",
        "target_mask_ignored",
        (POST_SELF, POST_SELF.replace(", tgt_mask)", ")")),
        (PRE_SELF, PRE_SELF.replace(", tgt_mask)", ")")),
    ),
    mutant(
        "decoder_layer",
        "masks_swapped",
        (POST_SELF, POST_SELF.replace("tgt_mask", "memory_mask")),
        (POST_CROSS, "self.cross_attn(x, memory, memory, tgt_mask)"),
    ),
    mutant(
        "decoder_layer",
        "post_ln_norms_in_wrong_order",
        (POST_NORM1, "x = self.norm3(x + self.dropout1(attended))"),
        (POST_NORM3, "x = self.norm1(x + self.dropout3(self.ffn(x)))"),
    ),
    mutant(
        "decoder_layer",
        "post_ln_norm_before_residual",
        (POST_NORM2, "x = x + self.dropout2(self.norm2(attended))"),
    ),
    mutant(
        "decoder_layer",
        "post_ln_ffn_residual_missing",
        (POST_NORM3, "x = self.norm3(self.dropout3(self.ffn(x)))"),
    ),
    mutant(
        "decoder_layer",
        "pre_ln_cross_residual_missing",
        ("            x = x + self.dropout2(attended)\n", "            x = self.dropout2(attended)\n"),
    ),
    mutant(
        "decoder_layer",
        "pre_ln_memory_normalised",
        (PRE_CROSS, "self.cross_attn(self.norm2(x), self.norm2(memory), self.norm2(memory), memory_mask)"),
    ),
    mutant("decoder_layer", "pre_ln_post_ln_feed_forward", (PRE_FFN, "x = self.norm3(x + self.dropout3(self.ffn(x)))")),
    mutant(  # weights cast for the plots: the layer returns float32 weights from a bfloat16 layer
        "decoder_layer",
        "cross_weights_returned_in_float32",
        ("return x, self_weights, cross_weights", "return x, self_weights, cross_weights.float()"),
    ),
    mutant(
        "decoder_layer",
        "pre_ln_self_attention_key_not_normalised",
        (PRE_SELF, PRE_SELF.replace("normed, normed, normed", "normed, x, x")),
    ),
    mutant("decoder_layer", "norm_first_ignored", ("        if self.norm_first:", "        if False:")),
    mutant("decoder_layer", "always_pre_ln", ("        if self.norm_first:", "        if True:")),
    mutant("decoder_layer", "no_relu", ('                    ("relu", nn.ReLU()),\n', "")),
    mutant(
        "decoder_layer",
        "weights_swapped",
        ("return x, self_weights, cross_weights", "return x, cross_weights, self_weights"),
    ),
    mutant(
        "decoder_layer",
        "one_attention_module",
        (
            "self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)",
            "self.cross_attn = self.self_attn",
        ),
    ),
    mutant(
        "decoder_layer",
        "unnamed_feed_forward",
        (
            FFN,
            "        self.ffn = nn.Sequential(\n"
            "            nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model)\n"
            "        )\n",
        ),
    ),
    # --- decoder_layer: other correct answers ---
    alternative(
        "decoder_layer",
        "feed_forward_class_and_sublayer_loop",
        """
        class FeedForward(nn.Module):
            def __init__(self, d_model, d_ff, dropout):
                super().__init__()
                self.linear1 = nn.Linear(d_model, d_ff)
                self.linear2 = nn.Linear(d_ff, d_model)
                self.dropout = nn.Dropout(dropout)

            def forward(self, x):
                return self.linear2(self.dropout(F.relu(self.linear1(x))))


        class DecoderLayer(nn.Module):
            def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
                super().__init__()
                self.norm_first = norm_first
                self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
                self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
                self.ffn = FeedForward(d_model, d_ff, dropout)
                self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
                self.drop = nn.Dropout(dropout)

            def forward(self, x, memory, tgt_mask=None, memory_mask=None):
                weights = {}

                def self_block(h):
                    out, weights["self"] = self.self_attn(h, h, h, mask=tgt_mask)
                    return out

                def cross_block(h):
                    out, weights["cross"] = self.cross_attn(h, memory, memory, mask=memory_mask)
                    return out

                for norm, block in ((self.norm1, self_block), (self.norm2, cross_block), (self.norm3, self.ffn)):
                    if self.norm_first:
                        x = x + self.drop(block(norm(x)))
                    else:
                        x = norm(x + self.drop(block(x)))
                return x, weights["self"], weights["cross"]
        """,
    ),
    alternative(
        "decoder_layer",
        "sequential_attribute_assignment",
        """
        class DecoderLayer(nn.Module):
            def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0, norm_first: bool = False):
                super().__init__()
                self.norm_first = norm_first
                self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
                self.ffn = nn.Sequential()
                self.ffn.linear1 = nn.Linear(d_model, d_ff)
                self.ffn.act = nn.ReLU()
                self.ffn.drop = nn.Dropout(dropout)
                self.ffn.linear2 = nn.Linear(d_ff, d_model)
                self.norm1 = nn.LayerNorm(d_model)
                self.norm2 = nn.LayerNorm(d_model)
                self.norm3 = nn.LayerNorm(d_model)
                self.dropout = nn.Dropout(dropout)

            def forward(self, x, memory, tgt_mask=None, memory_mask=None):
                if not self.norm_first:
                    a, sw = self.self_attn(x, x, x, mask=tgt_mask)
                    x = self.norm1(x + self.dropout(a))
                    a, cw = self.cross_attn(x, memory, memory, mask=memory_mask)
                    x = self.norm2(x + self.dropout(a))
                    return self.norm3(x + self.dropout(self.ffn(x))), sw, cw
                h = self.norm1(x)
                a, sw = self.self_attn(h, h, h, mask=tgt_mask)
                x = x + self.dropout(a)
                a, cw = self.cross_attn(self.norm2(x), memory, memory, mask=memory_mask)
                x = x + self.dropout(a)
                return x + self.dropout(self.ffn(self.norm3(x))), sw, cw
        """,
    ),
    # --- transformer: mistakes ---
    mutant("transformer", "no_causal_mask", (TGT_MASK, "tgt_mask = (tgt_in != self.pad_idx)[:, None, None, :]")),
    mutant(
        "transformer",
        "no_target_padding_mask",
        (TGT_MASK, "tgt_mask = target_mask(torch.ones_like(tgt_in), 0)"),
    ),
    mutant(
        "transformer",
        "causal_mask_on_the_cpu",
        (
            TGT_MASK,
            "tgt_mask = torch.ones(tgt_in.size(1), tgt_in.size(1), dtype=torch.bool).tril() & "
            "(tgt_in != self.pad_idx)[:, None, None, :]",
        ),
    ),
    mutant(
        "transformer", "memory_mask_ignored", ("layer(x, memory, tgt_mask, memory_mask)", "layer(x, memory, tgt_mask)")
    ),
    mutant(
        "transformer",
        "memory_mask_from_the_target",
        (MEMORY_MASK, "memory_mask = (tgt_in != self.pad_idx)[:, None, None, :]"),
    ),
    mutant(
        "transformer",
        "target_mask_used_for_the_memory",
        ("layer(x, memory, tgt_mask, memory_mask)", "layer(x, memory, tgt_mask, tgt_mask)"),
    ),
    mutant("transformer", "encoder_without_mask", ("x = layer(x, src_mask)", "x = layer(x)")),
    mutant(
        "transformer",
        "no_embedding_scale_in_decoder",
        ("self.tgt_embed(tgt_in) * math.sqrt(self.d_model)", "self.tgt_embed(tgt_in)"),
    ),
    mutant(
        "transformer",
        "embedding_scaled_by_d_model",
        ("self.src_embed(src) * math.sqrt(self.d_model)", "self.src_embed(src) * self.d_model"),
    ),
    mutant("transformer", "target_embedded_with_source_table", ("self.tgt_embed(tgt_in)", "self.src_embed(tgt_in)")),
    mutant(
        "transformer",
        "no_positions_on_target",
        (
            "x = self.tgt_pos(self.tgt_embed(tgt_in) * math.sqrt(self.d_model))",
            "x = self.tgt_embed(tgt_in) * math.sqrt(self.d_model)",
        ),
    ),
    mutant("transformer", "decode_returns_hidden_states", ("return self.generator(x)  # (B, T, V_tgt)", "return x")),
    mutant(
        "transformer",
        "default_embedding_init",
        ("            nn.init.normal_(embedding.weight, mean=0.0, std=d_model**-0.5)\n", "            pass\n"),
    ),
    mutant(
        "transformer",
        "memory_from_target",
        (
            "return self.decode(tgt_in, self.encode(src), src)",
            "return self.decode(tgt_in, self.encode(tgt_in), tgt_in)",
        ),
    ),
    # --- transformer: other correct answers ---
    alternative(
        "transformer",
        "helpers_and_shared_mask",
        """
        class Transformer(nn.Module):
            def __init__(self, src_vocab_size, tgt_vocab_size, d_model, num_heads, num_layers, d_ff, max_len=512,
                         dropout=0.0, pad_idx=0):
                super().__init__()
                self.d_model, self.pad_idx = d_model, pad_idx
                self.src_embed = nn.Embedding(src_vocab_size, d_model)
                nn.init.normal_(self.src_embed.weight, std=1 / math.sqrt(d_model))
                self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model)
                nn.init.normal_(self.tgt_embed.weight, std=1 / math.sqrt(d_model))
                self.src_pos = LearnedPositionalEncoding(d_model, max_len=max_len, dropout=dropout)
                self.tgt_pos = LearnedPositionalEncoding(d_model, max_len=max_len, dropout=dropout)
                self.encoder_layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout)
                                                    for _ in range(num_layers))
                self.decoder_layers = nn.ModuleList(DecoderLayer(d_model, num_heads, d_ff, dropout)
                                                    for _ in range(num_layers))
                self.generator = nn.Linear(d_model, tgt_vocab_size)

            def _source_mask(self, src):
                return src.ne(self.pad_idx).unsqueeze(1).unsqueeze(1)

            def encode(self, src):
                x = self.src_pos(self.src_embed(src) * self.d_model**0.5)
                mask = self._source_mask(src)
                for layer in self.encoder_layers:
                    x = layer(x, mask=mask)
                return x

            def decode(self, tgt_in, memory, src):
                y = self.tgt_pos(self.tgt_embed(tgt_in) * self.d_model**0.5)
                self_mask, cross_mask = target_mask(tgt_in, self.pad_idx), self._source_mask(src)
                for layer in self.decoder_layers:
                    y = layer(y, memory, tgt_mask=self_mask, memory_mask=cross_mask)[0]
                return self.generator(y)

            def forward(self, src, tgt_in):
                memory = self.encode(src)
                return self.decode(tgt_in, memory, src)
        """,
    ),
    # --- greedy_decode: mistakes ---
    mutant("greedy", "no_pad_after_eos", (FILL_PAD, "")),
    mutant("greedy", "pad_written_over_eos", (FILL_PAD + APPEND + MARK_FINISHED, MARK_FINISHED + FILL_PAD + APPEND)),
    mutant("greedy", "stops_when_any_row_finishes", ("not finished.all()", "not finished.any()")),
    mutant("greedy", "never_stops_early", (" and not finished.all()", "")),
    mutant("greedy", "max_len_off_by_one", ("ys.size(1) < max_len", "ys.size(1) <= max_len")),
    mutant("greedy", "argmax_of_the_first_position", ("logits[:, -1].argmax(dim=-1)", "logits[:, 0].argmax(dim=-1)")),
    mutant("greedy", "argmax_over_the_batch", ("logits[:, -1].argmax(dim=-1)", "logits[:, -1].argmax(dim=0)")),
    mutant("greedy", "pad_hard_coded_to_zero", ("masked_fill(finished, model.pad_idx)", "masked_fill(finished, 0)")),
    mutant(
        "greedy",
        "feeds_only_the_last_token",
        ("model.decode(ys, memory, src)", "model.decode(ys[:, -1:], memory, src)"),
    ),
    mutant("greedy", "target_as_source_mask", ("model.decode(ys, memory, src)", "model.decode(ys, memory, ys)")),
    mutant("greedy", "starts_without_bos", ("(src.size(0), 1), bos_idx,", "(src.size(0), 1), eos_idx,")),
    mutant("greedy", "ys_on_the_default_device", ("bos_idx, dtype=torch.long, device=src.device)", "bos_idx)")),
    mutant(
        "greedy",
        "finished_on_the_default_device",
        ("torch.zeros(src.size(0), dtype=torch.bool, device=src.device)", "torch.zeros(src.size(0), dtype=torch.bool)"),
    ),
    mutant(
        "greedy", "finished_not_accumulated", ("finished |= next_token == eos_idx", "finished = next_token == eos_idx")
    ),
    mutant(
        "greedy",
        "switches_to_eval",
        ("    with torch.no_grad():\n        memory", "    model.eval()\n    with torch.no_grad():\n        memory"),
    ),
    mutant(
        "greedy",
        "eval_then_forces_train",
        ("    with torch.no_grad():\n        memory", "    model.eval()\n    with torch.no_grad():\n        memory"),
        ("    return ys\n", "    model.train()\n    return ys\n"),
    ),
    # --- greedy_decode: other correct answers ---
    alternative(
        "greedy",
        "for_loop_and_where",
        """
        @torch.no_grad()
        def greedy_decode(model, src, bos_idx, eos_idx, max_len):
            memory = model.encode(src)
            ys = src.new_full((src.shape[0], 1), bos_idx)
            done = src.new_zeros(src.shape[0], dtype=torch.bool)
            for _ in range(max_len - 1):
                if done.all():
                    break
                step = model.decode(ys, memory, src).argmax(-1)[:, -1]
                step = torch.where(done, torch.full_like(step, model.pad_idx), step)
                ys = torch.cat((ys, step.unsqueeze(1)), dim=-1)
                done = done | (step == eos_idx)
            return ys
        """,
    ),
    alternative(
        "greedy",
        "python_lists_per_row",
        """
        def greedy_decode(model, src, bos_idx, eos_idx, max_len):
            with torch.no_grad():
                memory = model.encode(src)
                rows = [[bos_idx] for _ in range(src.size(0))]
                finished = [False] * src.size(0)
                while len(rows[0]) < max_len and not all(finished):
                    ys = torch.tensor(rows, dtype=torch.long, device=src.device)
                    best = model.decode(ys, memory, src)[:, -1, :].max(dim=-1).indices.tolist()
                    for b, token in enumerate(best):
                        rows[b].append(model.pad_idx if finished[b] else token)
                        finished[b] = finished[b] or token == eos_idx
                return torch.tensor(rows, dtype=torch.long, device=src.device)
        """,
    ),
    # --- extra_credit_beam (extra credit): mistakes ---
    mutant("extra_credit_beam", "no_length_penalty", ("return ((5 + length) / 6) ** 0.6", "return 1.0")),
    # The mean log-probability per token: the search, which stops once beam_size hypotheses finished, ends below greedy.
    mutant("extra_credit_beam", "penalty_is_the_length", ("return ((5 + length) / 6) ** 0.6", "return float(length)")),
    mutant(
        "extra_credit_beam",
        "penalty_written_but_not_used",
        ("score.item() / length_penalty(tokens_of.numel() - 1)", "score.item()"),
    ),
    mutant(
        "extra_credit_beam",
        "beams_not_pruned_to_k",
        ("candidates.sort(descending=True, stable=True).indices[:keep]", "candidates.sort(descending=True).indices"),
    ),
    mutant("extra_credit_beam", "eos_beams_extended", ("done = tokens == eos_idx", "done = tokens < 0")),
    mutant(
        "extra_credit_beam",
        "branches_only_at_the_first_step",  # the first step keeps the best k; then each hypothesis goes on greedily
        (
            "candidates = (scores[:, None] + logits.float().log_softmax(dim=-1)).flatten()  # (k * V,)",
            "extended = scores[:, None] + logits.float().log_softmax(dim=-1)  # (k, V)\n"
            "                if beams.size(1) > 1:\n"
            "                    best_of_each = extended == extended.max(dim=-1, keepdim=True).values\n"
            "                    extended = extended.masked_fill(~best_of_each, float('-inf'))\n"
            "                candidates = extended.flatten()",
        ),
        (
            "candidates.sort(descending=True, stable=True).indices[:keep]",
            "candidates.sort(descending=True, stable=True).indices[: min(keep, int(candidates.isfinite().sum()))]",
        ),
    ),
    mutant(
        "extra_credit_beam",
        "finished_hypotheses_extended_too",  # kept among the finished and in the beam: the output hides it
        ("beams, scores = beams[~done], totals[~done]", "scores = totals"),
    ),
    mutant(
        "extra_credit_beam",
        "length_counts_bos",
        ("length_penalty(tokens_of.numel() - 1)", "length_penalty(tokens_of.numel())"),
        ("length = beams.size(1) - 1", "length = beams.size(1)"),
    ),
    mutant(
        "extra_credit_beam",
        "logits_summed_not_log_probabilities",
        ("scores[:, None] + logits.float().log_softmax(dim=-1)", "scores[:, None] + logits.float()"),
    ),
    mutant(
        "extra_credit_beam",
        "only_the_last_token_scored",
        ("scores[:, None] + logits.float().log_softmax(dim=-1)", "logits.float().log_softmax(dim=-1).expand(k, -1)"),
    ),
    mutant(
        "extra_credit_beam",
        "every_row_reads_row_0",
        ("memory = model.encode(row_src)  # (1, S, D)", "memory = model.encode(src[:1])  # (1, S, D)"),
    ),
    mutant(
        "extra_credit_beam",
        "unfinished_compete_at_max_len",  # the live hypotheses cut at max_len join the finished ones
        ("            if not finished:\n", "            if beams.size(0) > 0:\n"),
        ("finished = [(s.item() / length_penalty(length), t)", "finished += [(s.item() / length_penalty(length), t)"),
    ),
    mutant(
        "extra_credit_beam",
        "ties_to_the_higher_id",  # an ascending sort read from its end: equal totals come out later id first
        (
            "candidates.sort(descending=True, stable=True).indices[:keep]",
            "candidates.argsort(stable=True)[-keep:].flip(0)",
        ),
    ),
    # --- extra_credit_beam: other correct answers ---
    alternative(
        "extra_credit_beam",
        "python_lists_square_root_penalty",
        """
        def length_penalty(length):
            return max(1, length) ** 0.5  # between no penalty and the mean


        def beam_search(model, src, bos_idx, eos_idx, max_len, beam_size):
            # Hypotheses as (total, tokens) lists; a finished one leaves the beam, which shrinks by one.
            outputs = []
            with torch.no_grad():
                for b in range(src.size(0)):
                    row = src[b : b + 1]
                    memory = model.encode(row)
                    live, done = [(0.0, [bos_idx])], []
                    while live and len(done) < beam_size and len(live[0][1]) < max_len:
                        ids = torch.tensor([tokens for _, tokens in live], device=src.device)
                        logits = model.decode(ids, memory.expand(len(live), -1, -1), row.expand(len(live), -1))
                        logp = F.log_softmax(logits[:, -1].float(), dim=-1).tolist()
                        candidates = [(total + logp[i][v], tokens + [v]) for i, (total, tokens) in enumerate(live)
                                      for v in range(len(logp[i]))]
                        candidates.sort(key=lambda pair: -pair[0])
                        kept = candidates[: beam_size - len(done)]
                        done += [(total / length_penalty(len(t) - 1), t) for total, t in kept if t[-1] == eos_idx]
                        live = [(total, t) for total, t in kept if t[-1] != eos_idx]
                    pool = done or [(total / length_penalty(len(t) - 1), t) for total, t in live]
                    outputs.append(max(pool, key=lambda pair: pair[0])[1])
            width = max(len(tokens) for tokens in outputs)
            return torch.tensor([tokens + [model.pad_idx] * (width - len(tokens)) for tokens in outputs],
                                dtype=torch.long, device=src.device)
        """,
    ),
    alternative(
        "extra_credit_beam",
        "finished_beams_frozen_in_place",
        """
        def length_penalty(length):
            return ((5.0 + length) / 6.0) ** 1.0  # GNMT with alpha = 1


        def beam_search(model, src, bos_idx, eos_idx, max_len, beam_size):
            # A finished beam stays in its slot and can only be followed by <pad>, at no cost.
            rows = []
            with torch.no_grad():
                for b in range(src.size(0)):
                    row = src[b : b + 1]
                    memory = model.encode(row)
                    beams = torch.full((1, 1), bos_idx, dtype=torch.long, device=src.device)
                    scores = torch.zeros(1, device=src.device)
                    done = torch.zeros(1, dtype=torch.bool, device=src.device)
                    while beams.size(1) < max_len and not done.all():
                        k = beams.size(0)
                        logp = model.decode(beams, memory.expand(k, -1, -1), row.expand(k, -1))[:, -1]
                        logp = logp.float().log_softmax(dim=-1)
                        frozen = torch.full_like(logp, float("-inf"))
                        frozen[:, model.pad_idx] = 0.0
                        flat = (scores[:, None] + torch.where(done[:, None], frozen, logp)).flatten()
                        order = flat.argsort(descending=True, stable=True)[: int(torch.isfinite(flat).sum())]
                        order = order[:beam_size]
                        parent, token = order // logp.size(1), order % logp.size(1)
                        beams = torch.cat([beams[parent], token[:, None]], dim=1)
                        scores, done = flat[order], done[parent] | (token == eos_idx)
                    lengths = []
                    for tokens in beams.tolist():
                        lengths.append(tokens.index(eos_idx) if eos_idx in tokens[1:] else len(tokens) - 1)
                    normalised = torch.tensor([s / length_penalty(n) for s, n in zip(scores.tolist(), lengths)])
                    if done.any():
                        normalised[~done.cpu()] = float("-inf")
                    best = int(normalised.argmax())
                    rows.append(beams[best, : lengths[best] + 1])
            width = max(r.numel() for r in rows)
            out = torch.full((src.size(0), width), model.pad_idx, dtype=torch.long, device=src.device)
            for b, r in enumerate(rows):
                out[b, : r.numel()] = r
            return out
        """,
    ),
]

# --- Issue 51: answers gamed to pass the visible tests; the hidden tests fail each ---
VARIANTS += [
    mutant(
        "extra_credit_beam",
        "output_on_the_default_device",  # right wherever the default device is src's: on a CPU-only machine
        ("dtype=torch.long, device=src.device)\n        for b, row", "dtype=torch.long)\n        for b, row"),
        spares=("extra_credit_beam_greedy", "extra_credit_beam_search", "extra_credit_beam_batch"),
    ),
]
