"""Variants of the answers of 03_positional_encoding: realistic mistakes (mutants) and other correct answers."""

from testbed.variants.spec import alternative, mutant

ASSIGNMENT = "03_positional_encoding"

SIN_COS = "pe[:, 0::2] = torch.sin(angles)\n    pe[:, 1::2] = torch.cos(angles)"
FREQ_INDICES = "torch.arange(0, d_model, 2, dtype=torch.float64)"
FREQ_SCALE = "(-math.log(10000.0) / d_model)"
ODD_CHECK = (
    "    if d_model % 2 != 0:\n"
    '        raise ValueError(f"d_model must be even (sines and cosines come in pairs), got {d_model}")\n'
)
REGISTER = 'self.register_buffer("pe", pe, persistent=False)'
ADD = "self.dropout(x + self.pe[:, :length].to(x.dtype))"
LENGTH_CHECK = (
    "        if length > self.max_len:\n"
    '            raise ValueError(f"sequence length {length} is longer than max_len={self.max_len}")\n'
)
SIN_BLOCK = "    matrix[0::2, 1::2] = torch.diag(sin)  # ... and from the old cosine\n"
MINUS_SIN_BLOCK = "    matrix[1::2, 0::2] = torch.diag(-sin)  # new cosine from the old sine ...\n"
DIV_SCALE = "-(math.log(10000.0) / d_model)"
# The cells an answer that adds in place keeps: they check the dtype, the device and the dropout on sums taken
# before the calls, or on copies.
IN_PLACE_SPARES = ("positional_encoding_dtype_device", "positional_encoding_dropout")

VARIANTS = [
    # --- sinusoidal_encoding: mistakes ---
    mutant(
        "sinusoidal_encoding",
        "sin_cos_swapped",
        (SIN_COS, "pe[:, 0::2] = torch.cos(angles)\n    pe[:, 1::2] = torch.sin(angles)"),
    ),
    mutant(
        "sinusoidal_encoding", "exponent_i_over_d", (FREQ_INDICES, "torch.arange(0, d_model // 2, dtype=torch.float64)")
    ),
    mutant("sinusoidal_encoding", "log_of_ratio_bug", (FREQ_SCALE, "-(math.log(10000.0 / d_model))")),
    mutant("sinusoidal_encoding", "frequencies_not_divided_by_d", (FREQ_SCALE, "(-math.log(10000.0))")),
    mutant("sinusoidal_encoding", "exponent_sign_flipped", (FREQ_SCALE, "(math.log(10000.0) / d_model)")),
    mutant(
        "sinusoidal_encoding",
        "positions_start_at_1",
        ("torch.arange(max_len, dtype", "torch.arange(1, max_len + 1, dtype"),
    ),
    mutant("sinusoidal_encoding", "no_odd_check", (ODD_CHECK, "")),
    mutant(
        "sinusoidal_encoding",
        "assert_instead_of_value_error",
        (ODD_CHECK, '    assert d_model % 2 == 0, "d_model must be even"\n'),
    ),
    mutant("sinusoidal_encoding", "returns_float64", ("return pe.float()", "return pe")),
    mutant(
        "sinusoidal_encoding",
        "sines_then_cosines_layout",
        (SIN_COS, "pe[:, : d_model // 2] = torch.sin(angles)\n    pe[:, d_model // 2 :] = torch.cos(angles)"),
    ),
    # --- sinusoidal_encoding: other correct answers ---
    alternative(
        "sinusoidal_encoding",
        "float32_pow_and_stack",
        """
        def sinusoidal_encoding(max_len, d_model):
            if d_model % 2:
                raise ValueError(f"odd d_model={d_model}")
            position = torch.arange(max_len, dtype=torch.float32)[:, None]
            inverse = 1.0 / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
            angle = position * inverse
            return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(max_len, d_model)
        """,
    ),
    alternative(
        "sinusoidal_encoding",
        "loop_over_pairs",
        """
        def sinusoidal_encoding(max_len, d_model):
            if d_model % 2 == 1:
                raise ValueError("d_model must be even")
            pe = torch.empty(max_len, d_model)
            position = torch.arange(max_len, dtype=torch.float64)
            for i in range(d_model // 2):
                omega = 1.0 / math.pow(10000.0, 2 * i / d_model)
                pe[:, 2 * i] = torch.sin(position * omega)
                pe[:, 2 * i + 1] = torch.cos(position * omega)
            return pe
        """,
    ),
    alternative(
        "sinusoidal_encoding",
        "annotated_transformer_float32",
        """
        def sinusoidal_encoding(max_len, d_model):
            if d_model % 2 != 0:
                raise ValueError("sin and cos need an even d_model")
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            return pe
        """,
    ),
    alternative(
        "sinusoidal_encoding",
        "complex_polar",
        """
        def sinusoidal_encoding(max_len, d_model):
            if d_model % 2:
                raise ValueError(f"d_model={d_model} is odd")
            steps = torch.arange(max_len, dtype=torch.float64).outer(
                10000.0 ** (-torch.arange(d_model // 2, dtype=torch.float64) * 2 / d_model)
            )
            unit = torch.polar(torch.ones_like(steps), steps)  # cos + i sin
            return torch.view_as_real(unit).flip(-1).reshape(max_len, d_model).float()
        """,
    ),
    # --- PositionalEncoding: mistakes ---
    mutant("positional_encoding", "pe_is_a_parameter", (REGISTER, "self.pe = nn.Parameter(pe)")),
    mutant(
        "positional_encoding", "pe_is_a_frozen_parameter", (REGISTER, "self.pe = nn.Parameter(pe, requires_grad=False)")
    ),
    mutant("positional_encoding", "pe_is_a_plain_attribute", (REGISTER, "self.pe = pe")),
    mutant("positional_encoding", "pe_in_state_dict", (", persistent=False)", ")")),
    mutant(
        "positional_encoding",
        "no_batch_axis",
        (".unsqueeze(0)  # (1, max_len, D)", "  # (max_len, D)"),
        ("self.pe[:, :length]", "self.pe[:length]"),
    ),
    mutant("positional_encoding", "added_without_slicing", ("self.pe[:, :length]", "self.pe")),
    mutant("positional_encoding", "slices_the_batch_axis", ("self.pe[:, :length]", "self.pe[:length]")),
    mutant("positional_encoding", "no_dtype_cast", (".to(x.dtype))  #", ")  #")),
    mutant("positional_encoding", "no_length_check", (LENGTH_CHECK, "")),
    mutant(
        "positional_encoding",
        "table_rebuilt_on_the_default_device",
        (ADD, "self.dropout(x + sinusoidal_encoding(length, x.size(-1)).to(x.dtype))"),
    ),
    mutant("positional_encoding", "length_check_off_by_one", ("length > self.max_len", "length >= self.max_len")),
    mutant(
        "positional_encoding",
        "error_message_without_numbers",
        ('f"sequence length {length} is longer than max_len={self.max_len}"', '"sequence too long"'),
    ),
    mutant("positional_encoding", "index_error_instead_of_value_error", ("raise ValueError(", "raise IndexError(")),
    mutant("positional_encoding", "length_from_batch_axis", ("length = x.size(1)", "length = x.size(0)")),
    mutant("positional_encoding", "dropout_before_adding", (ADD, "self.dropout(x) + self.pe[:, :length].to(x.dtype)")),
    mutant("positional_encoding", "dropout_ignored", (ADD, "x + self.pe[:, :length].to(x.dtype)")),
    mutant(
        "positional_encoding",
        "adds_in_place",
        (ADD, "self.dropout(x.add_(self.pe[:, :length].to(x.dtype)))"),
        spares=IN_PLACE_SPARES,
    ),
    mutant(  # in place when no graph is kept, "to save memory": the visible test calls with gradients on
        "positional_encoding",
        "adds_in_place_under_no_grad",
        (
            ADD,
            "self.dropout(x.add_(self.pe[:, :length].to(x.dtype)) if not torch.is_grad_enabled()\n"
            "                            else x + self.pe[:, :length].to(x.dtype))",
        ),
        spares=IN_PLACE_SPARES,
    ),
    mutant(  # dropout written out, skipped at p = 0: its mask is made on the default device
        "positional_encoding",
        "dropout_mask_made_on_the_default_device",
        (
            "return " + ADD,
            "summed = x + self.pe[:, :length].to(x.dtype)\n"
            "        if self.training and self.dropout.p > 0:\n"
            "            keep = torch.rand(summed.shape) >= self.dropout.p\n"
            "            summed = summed * keep / (1 - self.dropout.p)\n"
            "        return summed",
        ),
    ),
    # --- PositionalEncoding: other correct answers ---
    alternative(
        "positional_encoding",
        "inline_table_narrow_functional_dropout",
        """
        class PositionalEncoding(nn.Module):
            def __init__(self, d_model, max_len=5000, dropout=0.0):
                super().__init__()
                self.p = dropout
                position = torch.arange(max_len, dtype=torch.float64)[:, None]
                omega = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
                table = torch.stack((torch.sin(position * omega), torch.cos(position * omega)), dim=-1).flatten(1)
                self.register_buffer("pe", table.float()[None], persistent=False)

            def forward(self, x):
                length = x.shape[1]
                if length > self.pe.shape[1]:
                    raise ValueError(f"got L={length} but max_len is {self.pe.shape[1]}")
                summed = x + self.pe.narrow(1, 0, length).type_as(x)
                return torch.nn.functional.dropout(summed, p=self.p, training=self.training)
        """,
    ),
    alternative(
        "positional_encoding",
        "broadcast_row_and_cast_result",
        """
        class PositionalEncoding(nn.Module):
            def __init__(self, d_model, max_len=5000, dropout=0.0):
                super().__init__()
                self.register_buffer("pe", sinusoidal_encoding(max_len, d_model)[None, :, :], persistent=False)
                self.drop = nn.Dropout(p=dropout)

            def forward(self, x):
                max_len = self.pe.size(1)
                if x.shape[-2] > max_len:
                    raise ValueError(f"input has {x.shape[-2]} positions, more than max_len = {max_len}")
                return self.drop((x + self.pe[0, : x.shape[-2]]).to(x.dtype))
        """,
    ),
    # --- relative_shift_matrix: mistakes ---
    mutant(
        "relative_shift_matrix",
        "rotation_sign_flipped",
        (SIN_BLOCK, SIN_BLOCK.replace("diag(sin)", "diag(-sin)")),
        (MINUS_SIN_BLOCK, MINUS_SIN_BLOCK.replace("diag(-sin)", "diag(sin)")),
    ),
    mutant("relative_shift_matrix", "transposed", ("return matrix.float()", "return matrix.T.float()")),
    mutant(
        "relative_shift_matrix",
        "cos_and_sin_swapped",
        ("cos, sin = torch.cos(angles), torch.sin(angles)", "sin, cos = torch.cos(angles), torch.sin(angles)"),
    ),
    mutant("relative_shift_matrix", "angle_not_times_k", ("angles = k * frequencies", "angles = frequencies")),
    mutant(
        "relative_shift_matrix",
        "exponent_i_over_d",
        (FREQ_INDICES, "torch.arange(0, d_model // 2, dtype=torch.float64)"),
    ),
    mutant("relative_shift_matrix", "log_of_ratio_bug", (FREQ_SCALE, "-(math.log(10000.0 / d_model))")),
    mutant("relative_shift_matrix", "only_the_cosines", (SIN_BLOCK, ""), (MINUS_SIN_BLOCK, "")),
    mutant("relative_shift_matrix", "returns_float64", ("return matrix.float()", "return matrix")),
    mutant(
        "relative_shift_matrix",
        "rotate_half_layout",
        source="""
        def relative_shift_matrix(k, d_model):
            half = d_model // 2
            frequencies = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
            cos, sin = torch.cos(k * frequencies), torch.sin(k * frequencies)
            matrix = torch.zeros(d_model, d_model, dtype=torch.float64)
            matrix[:half, :half] = torch.diag(cos)
            matrix[:half, half:] = torch.diag(sin)
            matrix[half:, :half] = torch.diag(-sin)
            matrix[half:, half:] = torch.diag(cos)
            return matrix.float()
        """,
    ),
    # --- relative_shift_matrix: other correct answers ---
    alternative(
        "relative_shift_matrix",
        "block_diag_float32",
        """
        def relative_shift_matrix(k, d_model):
            omegas = 1.0 / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
            blocks = []
            for phi in (k * omegas).tolist():
                c, s = math.cos(phi), math.sin(phi)
                blocks.append(torch.tensor([[c, s], [-s, c]]))
            return torch.block_diag(*blocks)
        """,
    ),
    alternative(
        "relative_shift_matrix",
        "entry_by_entry_loop",
        """
        def relative_shift_matrix(k, d_model):
            m = torch.zeros(d_model, d_model)
            for i in range(d_model // 2):
                angle = k * 10000.0 ** (-2 * i / d_model)
                m[2 * i, 2 * i] = math.cos(angle)
                m[2 * i, 2 * i + 1] = math.sin(angle)
                m[2 * i + 1, 2 * i] = -math.sin(angle)
                m[2 * i + 1, 2 * i + 1] = math.cos(angle)
            return m
        """,
    ),
    # --- fixed_div_term: wrong fixes ---
    mutant("fixed_div_term", "bug_left_in", (DIV_SCALE, "-(math.log(10000.0 / d_model))")),
    mutant("fixed_div_term", "multiplied_by_d_model", (DIV_SCALE, "-(math.log(10000.0) * d_model)")),
    mutant("fixed_div_term", "divided_twice", (DIV_SCALE, "-(math.log(10000.0 / d_model) / d_model)")),
    mutant("fixed_div_term", "not_divided_by_d_model", (DIV_SCALE, "-math.log(10000.0)")),
    mutant(
        "fixed_div_term", "minus_sign_dropped", ("* -(math.log(10000.0) / d_model)", "* (math.log(10000.0) / d_model)")
    ),
    mutant("fixed_div_term", "log10_instead_of_ln", ("math.log(10000.0)", "math.log10(10000.0)")),
    mutant("fixed_div_term", "exponent_i_over_d", ("torch.arange(0, d_model, 2)", "torch.arange(0, d_model // 2)")),
    mutant("fixed_div_term", "one_per_dimension", ("torch.arange(0, d_model, 2)", "torch.arange(0, d_model)")),
    mutant(
        "fixed_div_term",
        "returns_float64",
        ("torch.arange(0, d_model, 2)", "torch.arange(0, d_model, 2, dtype=torch.float64)"),
    ),
    # --- fixed_div_term: other correct answers ---
    alternative(
        "fixed_div_term",
        "pow_form",
        """
        def fixed_div_term(d_model):
            return 1.0 / 10000.0 ** (torch.arange(0, d_model, 2) / d_model)
        """,
    ),
    alternative(
        "fixed_div_term",
        "logspace",
        """
        def fixed_div_term(d_model):
            return torch.logspace(0, -4 * (d_model - 2) / d_model, d_model // 2)
        """,
    ),
    alternative(
        "fixed_div_term",
        "python_list",
        """
        def fixed_div_term(d_model):
            return torch.tensor([math.exp(-2 * i * math.log(10000.0) / d_model) for i in range(d_model // 2)])
        """,
    ),
]
