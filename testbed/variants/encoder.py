"""Variants of the answers of 04_encoder: realistic mistakes (mutants) and other correct answers."""

from testbed.variants.spec import alternative, mutant

ASSIGNMENT = "04_encoder"

FFN_HIDDEN = "hidden = self.dropout(torch.relu(self.linear1(x)))"
POST_LN = (
    "            x = self.norm1(x + self.dropout1(attended))\n"
    "            x = self.norm2(x + self.dropout2(self.ffn(x)))\n"
)
PRE_LN_ATTENTION = (
    "            normed = self.norm1(x)\n"
    "            attended, weights = self.self_attn(normed, normed, normed, mask)  # (B, L, D), (B, H, L, L)\n"
)
PRE_LN_FFN = "            x = x + self.dropout2(self.ffn(self.norm2(x)))\n"
PRE_ATTENTION_CALL = "self.self_attn(normed, normed, normed, mask)"
POST_ATTENTION_CALL = "self.self_attn(x, x, x, mask)"
LAYER_LIST = (
    "nn.ModuleList(\n"
    "            [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)]\n"
    "        )"
)
WARMUP_LENGTH = "warmup = min(max(10, total_steps // 10), total_steps // 2)"
WARMUP_RISE = "return 0.01 + 0.99 * step / warmup"
WARMUP_PROGRESS = "progress = min(1.0, (step - warmup) / max(1, total_steps - warmup))"
MASK_LINE = "        mask = (ids != self.pad_idx)[:, None, None, :]  # (B, 1, 1, L), True = real token\n"
SCALE_AND_POSITIONS = (
    "        x = self.embedding(ids) * math.sqrt(self.d_model)  # (B, L, D)\n"
    "        x = self.positional_encoding(x)  # (B, L, D)\n"
)
FINAL_NORM = "self.norm = nn.LayerNorm(d_model) if norm_first else None"
APPLY_NORM = "        if self.norm is not None:\n            x = self.norm(x)\n"

VARIANTS = [
    # --- PositionwiseFeedForward: mistakes ---
    mutant("ffn", "gelu_instead_of_relu", ("torch.relu(", "F.gelu(")),
    mutant("ffn", "no_activation", (FFN_HIDDEN, "hidden = self.dropout(self.linear1(x))")),
    mutant("ffn", "relu_after_linear2_too", ("return self.linear2(hidden)", "return torch.relu(self.linear2(hidden))")),
    mutant(
        "ffn",
        "dropout_after_linear2",
        (FFN_HIDDEN, "hidden = torch.relu(self.linear1(x))"),
        ("return self.linear2(hidden)", "return self.dropout(self.linear2(hidden))"),
    ),
    mutant("ffn", "dropout_on_the_input", (FFN_HIDDEN, "hidden = torch.relu(self.linear1(self.dropout(x)))")),
    mutant("ffn", "dropout_forgotten", (FFN_HIDDEN, "hidden = torch.relu(self.linear1(x))")),
    mutant("ffn", "dropout_probability_ignored", ("nn.Dropout(dropout)", "nn.Dropout()")),
    mutant(
        "ffn",
        "functional_dropout_always_on",
        (FFN_HIDDEN, "hidden = F.dropout(torch.relu(self.linear1(x)), self.dropout.p)"),
    ),
    mutant("ffn", "linears_without_bias", ("nn.Linear(d_model, d_ff)", "nn.Linear(d_model, d_ff, bias=False)")),
    mutant(
        "ffn",
        "relu_in_float32",  # a float32 hidden layer meets a bfloat16 linear2
        (FFN_HIDDEN, "hidden = self.dropout(torch.relu(self.linear1(x).float()))"),
        spares=("ffn_shapes", "ffn_dropout"),
    ),
    # --- PositionwiseFeedForward: other correct answers ---
    alternative(
        "ffn",
        "functional_relu_and_dropout",
        """
        class PositionwiseFeedForward(nn.Module):
            def __init__(self, d_model, d_ff, dropout=0.0):
                super().__init__()
                self.linear1 = nn.Linear(d_model, d_ff)
                self.linear2 = nn.Linear(d_ff, d_model)
                self.p = dropout

            def forward(self, x):
                return self.linear2(F.dropout(F.relu(self.linear1(x)), p=self.p, training=self.training))
        """,
    ),
    alternative(
        "ffn",
        "matmul_clamp_dropout_before_relu",
        """
        class PositionwiseFeedForward(nn.Module):
            def __init__(self, d_model, d_ff, dropout=0.0):
                super().__init__()
                self.linear1 = nn.Linear(d_model, d_ff)
                self.linear2 = nn.Linear(d_ff, d_model)
                self.dropout = nn.Dropout(p=dropout)

            def forward(self, x):
                hidden = x @ self.linear1.weight.T + self.linear1.bias
                hidden = self.dropout(hidden).clamp(min=0)  # dropout and ReLU commute
                return hidden @ self.linear2.weight.T + self.linear2.bias
        """,
    ),
    alternative(
        "ffn",
        "sequential_over_named_layers",
        """
        class PositionwiseFeedForward(nn.Module):
            def __init__(self, d_model, d_ff, dropout=0.0):
                super().__init__()
                self.linear1 = nn.Linear(d_model, d_ff)
                self.linear2 = nn.Linear(d_ff, d_model)
                self.net = nn.Sequential(self.linear1, nn.ReLU(), nn.Dropout(dropout), self.linear2)

            def forward(self, x):
                return self.net(x)
        """,
    ),
    # --- EncoderLayer: mistakes ---
    mutant(
        "encoder_layer",
        "post_ln_attention_residual_missing",
        ("x = self.norm1(x + self.dropout1(attended))", "x = self.norm1(self.dropout1(attended))"),
    ),
    mutant(
        "encoder_layer",
        "post_ln_ffn_residual_missing",
        ("x = self.norm2(x + self.dropout2(self.ffn(x)))", "x = self.norm2(self.dropout2(self.ffn(x)))"),
    ),
    mutant(
        "encoder_layer",
        "pre_ln_attention_residual_missing",
        ("x = x + self.dropout1(attended)", "x = self.dropout1(attended)"),
    ),
    mutant(
        "encoder_layer",
        "post_ln_norm_before_residual",
        (
            POST_LN,
            "            x = x + self.norm1(self.dropout1(attended))\n"
            "            x = x + self.norm2(self.dropout2(self.ffn(x)))\n",
        ),
    ),
    mutant(
        "encoder_layer",
        "pre_ln_normalises_the_residual_stream",
        (
            PRE_LN_ATTENTION,
            "            x = self.norm1(x)\n            attended, weights = self.self_attn(x, x, x, mask)\n",
        ),
        (PRE_LN_FFN, "            x = self.norm2(x)\n            x = x + self.dropout2(self.ffn(x))\n"),
    ),
    mutant("encoder_layer", "pre_ln_attention_reads_raw_x", (PRE_ATTENTION_CALL, "self.self_attn(x, x, x, mask)")),
    mutant("encoder_layer", "pre_ln_only_query_normalised", (PRE_ATTENTION_CALL, "self.self_attn(normed, x, x, mask)")),
    mutant("encoder_layer", "pre_ln_norm_after_ffn", ("self.ffn(self.norm2(x))", "self.norm2(self.ffn(x))")),
    mutant("encoder_layer", "norm_first_ignored", ("if self.norm_first:", "if False:")),
    mutant(
        "encoder_layer",
        "norms_swapped",
        (
            POST_LN,
            "            x = self.norm2(x + self.dropout1(attended))\n"
            "            x = self.norm1(x + self.dropout2(self.ffn(x)))\n",
        ),
    ),
    mutant("encoder_layer", "one_layernorm_shared", ("self.norm2 = nn.LayerNorm(d_model)", "self.norm2 = self.norm1")),
    mutant(
        "encoder_layer",
        "mask_not_passed",
        (PRE_ATTENTION_CALL, "self.self_attn(normed, normed, normed)"),
        (POST_ATTENTION_CALL, "self.self_attn(x, x, x)"),
    ),
    mutant(
        "encoder_layer",
        "mask_inverted",
        (PRE_ATTENTION_CALL, "self.self_attn(normed, normed, normed, None if mask is None else ~mask)"),
        (POST_ATTENTION_CALL, "self.self_attn(x, x, x, None if mask is None else ~mask)"),
    ),
    mutant(
        "encoder_layer",
        "dropout_on_the_residual_sum",
        ("x = self.norm1(x + self.dropout1(attended))", "x = self.norm1(self.dropout1(x + attended))"),
    ),
    mutant(
        "encoder_layer",
        "sublayer_dropout_forgotten",
        ("self.dropout1 = nn.Dropout(dropout)", "self.dropout1 = nn.Identity()"),
        ("self.dropout2 = nn.Dropout(dropout)", "self.dropout2 = nn.Identity()"),
    ),
    mutant(
        "encoder_layer",
        "attention_dropout_forgotten",
        ("MultiHeadAttention(d_model, num_heads, dropout=dropout)", "MultiHeadAttention(d_model, num_heads)"),
    ),
    mutant(
        "encoder_layer",
        "post_ln_ffn_reads_the_layer_input",
        (
            POST_LN,
            "            y = self.norm1(x + self.dropout1(attended))\n"
            "            x = self.norm2(y + self.dropout2(self.ffn(x)))\n",
        ),
    ),
    mutant(
        "encoder_layer",
        "default_mask_on_the_default_device",
        (
            "        if self.norm_first:  # Pre-LN",
            "        if mask is None:\n"
            "            mask = torch.ones(x.size(1), x.size(1), dtype=torch.bool)  # every key allowed\n"
            "        if self.norm_first:  # Pre-LN",
        ),
    ),
    # --- EncoderLayer: other correct answers ---
    alternative(
        "encoder_layer",
        "drops_a_mask_that_blocks_nothing",  # reads the mask's data: cannot run on the meta device
        """
        class EncoderLayer(nn.Module):
            def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
                super().__init__()
                self.norm_first = norm_first
                self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
                self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
                self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
                self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)

            def forward(self, x, mask=None):
                if mask is not None and bool(mask.all()):
                    mask = None  # nothing blocked: the same as no mask
                h = self.norm1(x) if self.norm_first else x
                attended, weights = self.self_attn(h, h, h, mask)
                x = x + self.dropout1(attended)
                if not self.norm_first:
                    x = self.norm1(x)
                    return self.norm2(x + self.dropout2(self.ffn(x))), weights
                return x + self.dropout2(self.ffn(self.norm2(x))), weights
        """,
    ),
    alternative(
        "encoder_layer",
        "sublayer_helper_one_dropout",
        """
        class EncoderLayer(nn.Module):
            def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
                super().__init__()
                self.norm_first = norm_first
                self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
                self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout=dropout)
                self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
                self.drop = nn.Dropout(dropout)

            def attend(self, h, mask):
                out, weights = self.self_attn(h, h, h, mask=mask)
                return self.drop(out), weights

            def forward(self, x, mask=None):
                if not self.norm_first:
                    update, weights = self.attend(x, mask)
                    x = self.norm1(x + update)
                    return self.norm2(x + self.drop(self.ffn(x))), weights
                update, weights = self.attend(self.norm1(x), mask)
                x = x + update
                return x + self.drop(self.ffn(self.norm2(x))), weights
        """,
    ),
    alternative(
        "encoder_layer",
        "functional_layer_norm_and_dropout",
        """
        class EncoderLayer(nn.Module):
            def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=False):
                super().__init__()
                self.norm_first = norm_first
                self.p = dropout
                self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout)
                self.ffn = PositionwiseFeedForward(d_model, d_ff, dropout)
                self.norm1 = nn.LayerNorm(d_model)
                self.norm2 = nn.LayerNorm(d_model)

            def ln(self, norm, x):
                return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)

            def forward(self, x, mask=None):
                drop = lambda t: F.dropout(t, self.p, self.training)  # noqa: E731
                h = self.ln(self.norm1, x) if self.norm_first else x
                a, w = self.self_attn(h, h, h, mask)
                x = x + drop(a)
                if not self.norm_first:
                    x = self.ln(self.norm1, x)
                h = self.ln(self.norm2, x) if self.norm_first else x
                x = x + drop(self.ffn(h))
                if not self.norm_first:
                    x = self.ln(self.norm2, x)
                return x, w
        """,
    ),
    # --- Encoder: mistakes ---
    mutant("encoder_model", "no_sqrt_scaling", (" * math.sqrt(self.d_model)", "")),
    mutant("encoder_model", "divides_by_sqrt", ("* math.sqrt(self.d_model)", "/ math.sqrt(self.d_model)")),
    mutant("encoder_model", "scales_by_d_model", ("math.sqrt(self.d_model)", "self.d_model")),
    mutant(
        "encoder_model",
        "scales_after_adding_positions",
        (SCALE_AND_POSITIONS, "        x = self.positional_encoding(self.embedding(ids)) * math.sqrt(self.d_model)\n"),
    ),
    mutant(
        "encoder_model",
        "mask_from_embeddings_after_positions",
        (MASK_LINE, ""),
        (SCALE_AND_POSITIONS, SCALE_AND_POSITIONS + "        mask = (x.abs().sum(dim=-1) != 0)[:, None, None, :]\n"),
    ),
    mutant(
        "encoder_model",
        "mask_from_embeddings_with_padding_idx",
        ("nn.Embedding(vocab_size, d_model)", "nn.Embedding(vocab_size, d_model, padding_idx=pad_idx)"),
        ("        nn.init.normal_(self.embedding.weight, mean=0.0, std=d_model**-0.5)\n", ""),
        (MASK_LINE, "        mask = (self.embedding(ids).abs().sum(dim=-1) != 0)[:, None, None, :]\n"),
    ),
    mutant("encoder_model", "pad_idx_hard_coded_zero", ("ids != self.pad_idx", "ids != 0")),
    mutant("encoder_model", "mask_inverted", ("ids != self.pad_idx", "ids == self.pad_idx")),
    mutant("encoder_model", "mask_not_passed_to_layers", ("x, weights = layer(x, mask)", "x, weights = layer(x)")),
    mutant("encoder_model", "no_final_norm_in_pre_ln", (FINAL_NORM, "self.norm = None")),
    mutant("encoder_model", "final_norm_in_post_ln_too", (FINAL_NORM, "self.norm = nn.LayerNorm(d_model)")),
    mutant("encoder_model", "final_norm_never_applied", (APPLY_NORM, "")),
    mutant(
        "encoder_model",
        "final_norm_after_every_layer",
        (
            "            all_weights.append(weights)\n" + APPLY_NORM,
            "            all_weights.append(weights)\n"
            "            if self.norm is not None:\n"
            "                x = self.norm(x)\n",
        ),
    ),
    mutant(
        "encoder_model",
        "one_layer_repeated",
        (LAYER_LIST, "nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)] * num_layers)"),
    ),
    mutant(
        "encoder_model",
        "plain_python_list",
        (LAYER_LIST, "[EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)]"),
    ),
    mutant(
        "encoder_model",
        "layers_ignore_norm_first",
        ("dropout, norm_first) for _", "dropout) for _"),
    ),
    mutant("encoder_model", "only_last_weights_returned", ("all_weights.append(weights)", "all_weights = [weights]")),
    mutant(
        "encoder_model",
        "default_embedding_init",
        ("        nn.init.normal_(self.embedding.weight, mean=0.0, std=d_model**-0.5)\n", ""),
    ),
    mutant(
        "encoder_model",
        "positions_without_dropout",
        ("LearnedPositionalEncoding(d_model, max_len, dropout)", "LearnedPositionalEncoding(d_model, max_len)"),
    ),
    # --- Encoder: other correct answers ---
    alternative(
        "encoder_model",
        "padding_idx_append_loop_unsqueeze",
        """
        class Encoder(nn.Module):
            def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len=512, dropout=0.0, pad_idx=0,
                         norm_first=False):
                super().__init__()
                self.d_model, self.pad_idx = d_model, pad_idx
                self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_idx)
                with torch.no_grad():
                    self.embedding.weight.normal_(0.0, 1.0 / math.sqrt(d_model))
                self.positional_encoding = LearnedPositionalEncoding(d_model, max_len=max_len, dropout=dropout)
                self.layers = nn.ModuleList()
                for _ in range(num_layers):
                    self.layers.append(EncoderLayer(d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first))
                self.norm = nn.LayerNorm(d_model) if norm_first else None

            def forward(self, ids):
                keep = ids.ne(self.pad_idx).unsqueeze(1).unsqueeze(2)
                x = self.positional_encoding(self.embedding(ids) * self.d_model**0.5)
                weights = []
                for layer in self.layers:
                    x, w = layer(x, mask=keep)
                    weights += [w]
                return (x if self.norm is None else self.norm(x)), weights
        """,
    ),
    alternative(
        "encoder_model",
        "identity_norm_and_functional_embedding",
        """
        class Encoder(nn.Module):
            def __init__(self, vocab_size, d_model, num_heads, d_ff, num_layers, max_len=512, dropout=0.0, pad_idx=0,
                         norm_first=False):
                super().__init__()
                self.d_model = d_model
                self.pad_idx = pad_idx
                self.embedding = nn.Embedding(vocab_size, d_model)
                nn.init.normal_(self.embedding.weight, std=1 / d_model**0.5)
                self.positional_encoding = LearnedPositionalEncoding(d_model, max_len, dropout)
                layers = [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first) for _ in range(num_layers)]
                self.layers = nn.ModuleList(layers)
                self.norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()

            def forward(self, ids):
                batch, length = ids.shape
                keep = torch.where(ids == self.pad_idx, False, True).view(batch, 1, 1, length)
                x = F.embedding(ids, self.embedding.weight) * math.sqrt(self.d_model)
                x = self.positional_encoding(x)
                all_weights = []
                for layer in self.layers:
                    x, weights = layer(x, keep)
                    all_weights.append(weights)
                return self.norm(x), all_weights
        """,
    ),
    # --- encoder_layer_param_count: mistakes ---
    mutant(
        "param_count",
        "biases_forgotten",
        source="""
        def encoder_layer_param_count(d_model, d_ff):
            return 4 * d_model * d_model + 2 * d_model * d_ff + 4 * d_model
        """,
    ),
    mutant(
        "param_count",
        "layer_norms_forgotten",
        ("    layer_norms = 2 * 2 * d_model  # norm1 and norm2: a gain and a bias each\n", "    layer_norms = 0\n"),
    ),
    mutant("param_count", "layer_norm_bias_forgotten", ("2 * 2 * d_model", "2 * d_model")),
    mutant(
        "param_count",
        "output_projection_forgotten",
        ("4 * d_model * d_model + 4 * d_model", "3 * d_model * d_model + 3 * d_model"),
    ),
    mutant("param_count", "ffn_bias_sizes_mixed_up", ("+ d_ff + d_model  # W_1", "+ 2 * d_model  # W_1")),
    mutant("param_count", "float_from_math_pow", ("4 * d_model * d_model", "4 * math.pow(d_model, 2)")),
    mutant(
        "param_count",
        "counts_a_built_module",
        source="""
        def encoder_layer_param_count(d_model, d_ff):
            layer = nn.TransformerEncoderLayer(d_model, 1, d_ff)
            return sum(p.numel() for p in layer.parameters())
        """,
    ),
    # --- encoder_layer_param_count: other correct answers ---
    alternative(
        "param_count",
        "expanded_polynomial",
        """
        def encoder_layer_param_count(d_model, d_ff):
            return 4 * d_model**2 + 2 * d_model * d_ff + 9 * d_model + d_ff
        """,
    ),
    alternative(
        "param_count",
        "table_of_shapes",
        """
        def encoder_layer_param_count(d_model: int, d_ff: int) -> int:
            shapes = [
                (3 * d_model, d_model), (3 * d_model,), (d_model, d_model), (d_model,),  # attention
                (d_ff, d_model), (d_ff,), (d_model, d_ff), (d_model,),  # feed-forward
                (d_model,), (d_model,), (d_model,), (d_model,),  # two LayerNorms
            ]
            return sum(math.prod(shape) for shape in shapes)
        """,
    ),
    # --- train_step: mistakes ---
    mutant("train_step", "gradients_never_zeroed", ("    optimizer.zero_grad()\n", "")),
    mutant(
        "train_step",
        "gradients_zeroed_before_the_step",
        ("    optimizer.zero_grad()\n", ""),
        ("    loss.backward()\n", "    loss.backward()\n    optimizer.zero_grad()\n"),
    ),
    mutant(
        "train_step",
        "clipped_before_backward",
        ("    loss.backward()\n", ""),
        ("    optimizer.step()\n", "    loss.backward()\n    optimizer.step()\n"),
    ),
    mutant(
        "train_step",
        "clipped_after_the_step",
        ("    optimizer.step()\n", ""),
        ("    loss.backward()\n", "    loss.backward()\n    optimizer.step()\n"),
    ),
    mutant(
        "train_step",
        "clipped_by_value",
        (
            "nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)",
            "nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)",
        ),
    ),
    mutant(
        "train_step",
        "each_parameter_clipped_on_its_own",
        (
            "        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)\n",
            "        for parameter in model.parameters():\n"
            "            nn.utils.clip_grad_norm_(parameter, max_grad_norm)\n",
        ),
    ),
    mutant("train_step", "scheduler_never_stepped", ("    if scheduler is not None:\n        scheduler.step()\n", "")),
    mutant(
        "train_step",
        "scheduler_stepped_before_the_optimizer",
        ("    if scheduler is not None:\n        scheduler.step()\n", ""),
        ("    optimizer.step()\n", "    if scheduler is not None:\n        scheduler.step()\n    optimizer.step()\n"),
    ),
    mutant("train_step", "returns_the_loss_tensor", ("return loss.item()", "return loss")),
    mutant(
        "train_step", "returns_the_loss_after_the_step", ("return loss.item()", "return loss_fn(model, batch).item()")
    ),
    mutant(
        "train_step",
        "clips_at_one_when_none",  # a default limit where the caller asked for none
        (
            "    if max_grad_norm is not None:\n        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)\n",
            "    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm or 1.0)\n",
        ),
        spares=("train_step_update", "train_step_zero_grad", "train_step_scheduler", "train_step_keeps_mode"),
    ),
    mutant(
        "train_step",
        "sets_train_mode",  # the caller's mode is the caller's
        ("    loss = loss_fn(model, batch)", "    model.train()\n    loss = loss_fn(model, batch)"),
        spares=("train_step_update", "train_step_zero_grad", "train_step_clipping", "train_step_scheduler"),
    ),
    # --- train_step: other correct answers ---
    alternative(
        "train_step",
        "zeroed_first_float_and_clip_on_a_list",
        """
        def train_step(model, batch, loss_fn, optimizer, scheduler=None, max_grad_norm=None):
            optimizer.zero_grad(set_to_none=False)  # clear what an earlier call left, before this backward
            loss = loss_fn(model, batch)
            loss.backward()
            parameters = [p for p in model.parameters() if p.grad is not None]
            if max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(parameters, max_norm=max_grad_norm)
            optimizer.step()
            if scheduler:
                scheduler.step()
            return float(loss.detach())
        """,
    ),
    alternative(
        "train_step",
        "model_zero_grad_and_hand_written_clipping",
        """
        def train_step(model, batch, loss_fn, optimizer, scheduler=None, max_grad_norm=None):
            value = loss_fn(model, batch)
            value.backward()
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            if max_grad_norm is not None:
                norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
                if norm > max_grad_norm:
                    for g in grads:
                        g.mul_(max_grad_norm / norm)
            optimizer.step()
            model.zero_grad(set_to_none=True)
            if scheduler is not None:
                scheduler.step()
            return value.item()
        """,
    ),
    # --- evaluate: mistakes ---
    mutant(
        "evaluate",
        "gradients_tracked",
        ("    with torch.no_grad():\n", "    if True:\n"),
    ),
    mutant("evaluate", "left_in_eval_mode", ("    model.train(was_training)\n", "")),
    mutant(  # no .item() per batch, to spare a device sync; the running sum starts on the default device
        "evaluate",
        "loss_summed_in_a_tensor_made_on_the_default_device",
        ("total_loss, correct, count = 0.0, 0, 0", "total_loss, correct, count = torch.zeros(()), 0, 0"),
        ('reduction="sum").item()', 'reduction="sum")'),
        ("return total_loss / count", "return total_loss.item() / count"),
    ),
    mutant("evaluate", "always_back_to_training_mode", ("model.train(was_training)", "model.train()")),
    mutant("evaluate", "never_switched_to_eval_mode", ("    model.eval()\n", "")),
    mutant(
        "evaluate",
        "mean_over_batches",
        source="""
        def evaluate(model, batches, logits_fn):
            was_training = model.training
            model.eval()
            losses, accuracies = [], []
            with torch.no_grad():
                for batch in batches:
                    logits, labels = logits_fn(model, batch)
                    losses.append(F.cross_entropy(logits, labels).item())
                    accuracies.append((logits.argmax(dim=-1) == labels).float().mean().item())
            model.train(was_training)
            return sum(losses) / len(losses), sum(accuracies) / len(accuracies)
        """,
    ),
    mutant(
        "evaluate",
        "accuracy_over_batches",
        source="""
        def evaluate(model, batches, logits_fn):
            was_training = model.training
            model.eval()
            total_loss, count, accuracies = 0.0, 0, []
            with torch.no_grad():
                for batch in batches:
                    logits, labels = logits_fn(model, batch)
                    total_loss += F.cross_entropy(logits, labels, reduction="sum").item()
                    count += len(labels)
                    accuracies.append((logits.argmax(dim=-1) == labels).float().mean().item())
            model.train(was_training)
            return total_loss / count, sum(accuracies) / len(accuracies)
        """,
    ),
    # --- evaluate: other correct answers ---
    alternative(
        "evaluate",
        "inference_mode_weighted_means_and_finally",
        """
        def evaluate(model, batches, logits_fn):
            mode = model.training
            model.eval()
            loss_sum = correct = examples = 0
            try:
                with torch.inference_mode():
                    for batch in batches:
                        logits, labels = logits_fn(model, batch)
                        n = labels.shape[0]
                        loss_sum += F.cross_entropy(logits, labels) * n
                        correct += (logits.argmax(-1) == labels).sum()
                        examples += n
            finally:
                model.train(mode)
            return float(loss_sum) / examples, float(correct) / examples
        """,
    ),
    alternative(
        "evaluate",
        "concatenate_then_score_each_module_restored",
        """
        @torch.no_grad()
        def evaluate(model, batches, logits_fn):
            modes = {module: module.training for module in model.modules()}
            model.eval()
            pairs = [logits_fn(model, batch) for batch in batches]
            for module, mode in modes.items():
                module.training = mode
            logits = torch.cat([p[0].float() for p in pairs])
            labels = torch.cat([p[1] for p in pairs])
            loss = F.nll_loss(torch.log_softmax(logits, dim=1), labels)
            accuracy = logits.argmax(dim=1).eq(labels).float().mean()
            return loss.item(), accuracy.item()
        """,
    ),
    # --- extra_credit_warmup (extra credit): mistakes ---
    mutant("extra_credit_warmup", "no_warm_up", (WARMUP_RISE, "return 1.0")),
    mutant(
        "extra_credit_warmup",
        "warm_up_from_half_the_peak",
        (WARMUP_RISE, "return 0.5 + 0.5 * step / warmup"),
    ),
    mutant(
        "extra_credit_warmup",
        "warm_up_in_two_ramps",  # the rate drops back half-way through the warm-up, then rises to the peak
        (WARMUP_RISE, "return 0.01 + 0.99 * (2 * step % warmup) / warmup"),
        spares=("extra_credit_warmup_groups",),
    ),
    mutant(
        "extra_credit_warmup",
        "warm_up_of_100_steps",  # right for 200 steps; a run of 10 or 25 never reaches the peak
        (WARMUP_LENGTH, "warmup = 100"),
    ),
    mutant(
        "extra_credit_warmup",
        "warm_up_over_the_whole_run",  # the peak only at the very end
        (WARMUP_LENGTH, "warmup = total_steps"),
    ),
    mutant(
        "extra_credit_warmup",
        "cosine_with_restarts",  # a second warm-up half-way through the decay
        (WARMUP_PROGRESS, "progress = (2 * (step - warmup) / max(1, total_steps - warmup)) % 1.0"),
    ),
    mutant(
        "extra_credit_warmup",
        "overshoots_the_peak",
        ("return 0.05 + 0.95 * 0.5 * (1.0 + math.cos(math.pi * progress))",
         "return 0.05 + 1.45 * 0.5 * (1.0 + math.cos(math.pi * progress))"),
    ),
    mutant(
        "extra_credit_warmup",
        "one_rate_for_every_group",
        source="""
        def post_ln_schedule(optimizer, total_steps):
            peak = optimizer.param_groups[0]["lr"]
            warmup = max(1, total_steps // 10)

            class SharedRate:
                def __init__(self):
                    self.count = -1
                    self.step()

                def step(self):
                    self.count += 1
                    scale = min(1.0, (self.count + 1) / (warmup + 1))
                    if self.count >= warmup:
                        scale = max(0.0, 1 - (self.count - warmup) / total_steps)
                    for group in optimizer.param_groups:
                        group["lr"] = peak * scale

            return SharedRate()
        """,
    ),
    # --- extra_credit_warmup: other correct answers ---
    alternative(
        "extra_credit_warmup",
        "one_cycle",
        """
        def post_ln_schedule(optimizer, total_steps):
            # A quarter of the run to warm up: 25 times below the peak at first.
            peaks = [group["lr"] for group in optimizer.param_groups]
            return torch.optim.lr_scheduler.OneCycleLR(
                optimizer, max_lr=peaks, total_steps=total_steps, pct_start=0.25, cycle_momentum=False
            )
        """,
    ),
    alternative(
        "extra_credit_warmup",
        "short_warm_up_then_linear_decay_to_zero",
        """
        def post_ln_schedule(optimizer, total_steps):
            warm = max(2, round(0.05 * total_steps))

            def factor(step):
                if step < warm:
                    return step / warm  # 0 at the first step: the smallest possible
                return max(0.0, (total_steps - step) / (total_steps - warm))

            return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
        """,
    ),
]

# --- Issue 51: answers gamed to pass the visible tests; the hidden tests fail each ---
VARIANTS += [
    mutant(
        "extra_credit_warmup",
        "one_floor_for_every_group",  # never below 1e-6: right for peaks of 1e-4 and up, above a peak of 1e-7
        ("    return torch.optim.lr_scheduler.LambdaLR(optimizer, multiplier)",
         "    class Floored(torch.optim.lr_scheduler.LambdaLR):\n"
         "        def get_lr(self) -> list[float]:\n"
         "            return [max(rate, 1e-6) for rate in super().get_lr()]\n\n"
         "    return Floored(optimizer, multiplier)"),
        spares=("extra_credit_warmup_shape",),
    ),
]
