"""Notebook 06's "your own Transformer": the student's answers of 01-05, loaded, checked and assembled.

The parts come from the sibling notebooks of the student's copy of the course
(``../01_attention/01_attention.ipynb`` and so on). Only their answer cells run (code cells that
nbgrader marks ``solution`` and not ``grade``), in a fresh module whose namespace holds just the
imports of that notebook's setup cell: no test cell, no training, no figure. Each part is then
checked against PyTorch's own module holding the same weights (``F.scaled_dot_product_attention``,
``nn.MultiheadAttention``, ``nn.Embedding``, ``nn.TransformerEncoderLayer``,
``nn.TransformerDecoderLayer``). A missing notebook, an unfinished answer or a failed check is named,
and the course's reference module stands in for that part, so the section always runs.

Nothing here is graded, and nothing here holds an exercise's solution: the checks compare with
PyTorch, and the one table of values written out (positions for ``d_model = 8``) is a single case.
"""

import ast
import contextlib
import io
import json
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from tfcourse import reference
from tfcourse.hosted import SETUP_CALL, SETUP_CELL_ID
from tfcourse.messages import tr

NOTEBOOKS = (
    "01_attention",
    "02_multi_head_attention",
    "03_positional_encoding",
    "04_encoder",
    "05_encoder_decoder",
)
ENCODER_RENAMES = {"linear1.": "ffn.linear1.", "linear2.": "ffn.linear2."}
DECODER_RENAMES = {**ENCODER_RENAMES, "multihead_attn.": "cross_attn."}


@dataclass(frozen=True)
class Outcome:
    """What happened to one part: checked and passed, or why the reference stands in for it."""

    notebook: str
    part: str
    passed: bool
    detail: str
    used: str


@dataclass
class OwnParts:
    """The modules the classifier is built from: the student's where they passed, else the reference.

    ``positional_encoding`` and ``encoder_layer`` are ``None`` when the reference stands in (the
    classifier then keeps its own ``LearnedPositionalEncoding`` and ``EncoderLayer``).
    """

    attention: Callable = reference.attention
    multi_head_attention: type[nn.Module] = reference.MultiHeadAttention
    positional_encoding: type[nn.Module] | None = None
    encoder_layer: type[nn.Module] | None = None
    outcomes: list[Outcome] = field(default_factory=list)

    def table(self) -> list[dict[str, str]]:
        """One row per part, for ``pandas.DataFrame``."""
        return [
            {"notebook": o.notebook, "part": o.part, "check": tr("passed") if o.passed else o.detail, "used": o.used}
            for o in self.outcomes
        ]


# --- reading a student's notebook -------------------------------------------------------------


def notebook_path(course_dir: Path, name: str) -> Path:
    return Path(course_dir) / name / f"{name}.ipynb"


def _cell_source(cell: Mapping) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def is_answer_cell(cell: Mapping) -> bool:
    """A code cell the student writes: nbgrader's ``solution`` without ``grade``."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.get("cell_type") == "code" and bool(meta.get("solution")) and not meta.get("grade")


def setup_imports(cells: list[Mapping]) -> str:
    """The import statements of the notebook's setup cell (its first code cell after the hosted-install cell the
    release writes, :mod:`tfcourse.hosted`), nothing else of it."""
    code = [c for c in cells if c.get("cell_type") == "code"]
    own = [c for c in code if c.get("id") != SETUP_CELL_ID and not SETUP_CALL.search(_cell_source(c))]
    setup = _cell_source(own[0]) if own else ""
    tree = ast.parse(setup)
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


def load_answers(path: Path) -> tuple[types.ModuleType, dict[str, str]]:
    """Run the answer cells of the notebook at ``path`` in a fresh module; return it and the cells that failed.

    The module starts with the setup cell's imports only. A failing answer cell is recorded
    (``{grade id: error}``) and the others still run. Raises ``FileNotFoundError`` for a missing
    notebook, ``ValueError`` for one that is not valid JSON, and whatever its setup imports raise.
    """
    try:
        cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    module = types.ModuleType(f"student_{Path(path).stem}")
    errors: dict[str, str] = {}
    with contextlib.redirect_stdout(io.StringIO()):  # answers may print; this section shows the checks only
        exec(compile(setup_imports(cells), f"{path}:setup", "exec"), module.__dict__)
        for cell in filter(is_answer_cell, cells):
            name = cell["metadata"]["nbgrader"].get("grade_id", "?")
            code = "\n".join(
                line for line in _cell_source(cell).splitlines() if not line.lstrip().startswith(("%", "!"))
            )
            try:
                exec(compile(code, f"{path}:{name}", "exec"), module.__dict__)
            except (Exception, SystemExit) as error:  # a student's cell may raise anything: report it
                errors[name] = f"{type(error).__name__}: {error}"
    return module, errors


# --- PyTorch's weights in the course's modules -------------------------------------------------


def _course_name(name: str, renames: Mapping[str, str]) -> str:
    for old, new in renames.items():
        if name.startswith(old):
            return new + name[len(old) :]
    return name


def course_state(torch_module: nn.Module, target: nn.Module, renames: Mapping[str, str]) -> dict[str, torch.Tensor]:
    """``torch_module``'s weights under ``target``'s names.

    ``renames`` maps prefixes (``linear1.`` -> ``ffn.linear1.``). Where ``target`` keeps separate
    projections ``w_q, w_k, w_v, w_o`` (notebook 02), the fused ``in_proj`` is cut in three and
    ``out_proj`` becomes ``w_o``; where it is ``nn.MultiheadAttention`` the names already fit.
    """
    wanted = set(target.state_dict())
    state: dict[str, torch.Tensor] = {}
    for name, value in torch_module.state_dict().items():
        name = _course_name(name, renames)
        owner, _, leaf = name.rpartition(".")
        base = f"{owner}." if owner else ""
        if leaf in ("in_proj_weight", "in_proj_bias") and f"{base}w_q.{leaf[8:]}" in wanted:
            for projection, chunk in zip("qkv", value.chunk(3), strict=True):
                state[f"{base}w_{projection}.{leaf[8:]}"] = chunk
        elif owner.endswith("out_proj") and f"{owner[: -len('out_proj')]}w_o.{leaf}" in wanted:
            state[f"{owner[: -len('out_proj')]}w_o.{leaf}"] = value
        else:
            state[name] = value
    return state


def copy_weights(torch_module: nn.Module, target: nn.Module, renames: Mapping[str, str] = {}) -> None:
    """Load ``torch_module``'s weights into ``target``; fail with the names when they do not fit."""
    try:
        target.load_state_dict(course_state(torch_module, target, renames))
    except RuntimeError as error:
        raise AssertionError(
            tr("PyTorch's weights do not fit your module's attributes: {error}", error=error)
        ) from None


# --- the checks: each raises AssertionError naming what failed -------------------------------


def _near(name: str, actual: object, expected: torch.Tensor, tolerance: float) -> None:
    if not isinstance(actual, torch.Tensor):
        raise AssertionError(tr("{name}: expected a tensor, got {kind}", name=name, kind=type(actual).__name__))
    if actual.shape != expected.shape:
        raise AssertionError(
            tr(
                "{name}: shape {got}, expected {expected}",
                name=name,
                got=tuple(actual.shape),
                expected=tuple(expected.shape),
            )
        )
    difference = (actual.detach().cpu().double() - expected.detach().cpu().double()).abs().max().item()
    if not difference < tolerance:  # NaN fails too
        raise AssertionError(
            tr(
                "{name}: max difference {difference:.2g} from PyTorch (should be < {tolerance:.0e})",
                name=name,
                difference=difference,
                tolerance=tolerance,
            )
        )


def _pair(result: object, name: str) -> tuple:
    if not isinstance(result, tuple):
        raise AssertionError(tr("{name} should return a tuple, got {kind}", name=name, kind=type(result).__name__))
    return result


def _randomize_norms(module: nn.Module, generator: torch.Generator) -> None:
    """Random LayerNorm gains and biases, so that a LayerNorm in the wrong place shows."""
    with torch.no_grad():
        for part in module.modules():
            if isinstance(part, nn.LayerNorm):
                part.weight.copy_(1 + 0.3 * torch.randn(part.weight.shape, generator=generator))
                part.bias.copy_(0.3 * torch.randn(part.bias.shape, generator=generator))


def check_attention(attend: Callable) -> None:
    """Notebook 01's ``scaled_dot_product_attention`` against ``F.scaled_dot_product_attention``."""
    generator = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 3, 4, 8, generator=generator), torch.randn(2, 3, 6, 8, generator=generator)
    v = torch.randn(2, 3, 6, 5, generator=generator)  # (B, H, Lk, Dv), Dv != Dk
    padding = torch.tensor([[True] * 6, [True] * 3 + [False] * 3])[:, None, None, :]  # (B, 1, 1, Lk)
    causal = torch.ones(4, 6, dtype=torch.bool).tril()  # (Lq, Lk)
    for case, mask in [("no mask", None), ("a padding mask", padding), ("a causal mask", causal)]:
        output, weights = _pair(attend(q, k, v, mask=mask), "scaled_dot_product_attention")
        expected_output, expected_weights = reference.attention(q, k, v, mask=mask)
        _near(f"weights with {case}", weights, expected_weights, 1e-5)
        _near(f"output with {case}", output, expected_output, 1e-5)
    output, _ = attend(q, k, v, mask=torch.zeros(4, 6, dtype=torch.bool))
    if not torch.isfinite(output).all():
        raise AssertionError(tr("a fully masked row gives NaN or inf: fill masked scores with torch.finfo(dtype).min"))
    output, weights = attend(q, k, v, dropout=nn.Dropout(0.5).train())
    if not (weights == 0).any():
        raise AssertionError(tr("with dropout=nn.Dropout(0.5) no weight is 0: apply `dropout` to the weights"))
    _near("output from the returned (dropped-out) weights", output, weights @ v, 1e-5)
    output, _ = attend(q.bfloat16(), k.bfloat16(), v.bfloat16())
    if output.dtype != torch.bfloat16:
        raise AssertionError(tr("bfloat16 inputs gave a {dtype} output: keep the inputs' dtype", dtype=output.dtype))


def check_multi_head_attention(module_class: type[nn.Module]) -> None:
    """Notebook 02's ``MultiHeadAttention`` against ``nn.MultiheadAttention`` holding the same weights."""
    generator = torch.Generator().manual_seed(2)
    twin = nn.MultiheadAttention(16, 4, batch_first=True).eval()
    module = module_class(16, 4).eval()
    copy_weights(twin, module)
    x, memory = torch.randn(2, 5, 16, generator=generator), torch.randn(2, 7, 16, generator=generator)
    keep = torch.tensor([[True] * 7, [True] * 4 + [False] * 3])  # (B, Lk), True = real token
    with torch.no_grad():
        for case, (query, key, mask) in {
            "self-attention": (x, x, None),
            "cross-attention with a padding mask": (x, memory, keep[:, None, None, :]),
        }.items():
            output, weights = _pair(module(query, key, key, mask=mask), "MultiHeadAttention")
            padding = None if mask is None else ~keep  # PyTorch's key_padding_mask: True = ignore
            expected_output, expected_weights = twin(
                query, key, key, key_padding_mask=padding, average_attn_weights=False
            )
            _near(f"{case}: weights (B, H, Lq, Lk)", weights, expected_weights, 1e-5)
            _near(f"{case}: output", output, expected_output, 1e-5)
    _, weights = module_class(16, 4, dropout=0.5).train()(x, x, x)
    if not (weights == 0).any():
        raise AssertionError(
            tr("with dropout=0.5 in train mode no attention weight is 0: pass the dropout to attention")
        )


def check_positional_encoding(
    module_class: type[nn.Module], d_model: int = 64, device: torch.device | str = "cpu"
) -> None:
    """Notebook 03's ``PositionalEncoding``: the table for d_model = 8, and its addition against ``nn.Embedding``."""
    # For d_model = 8 the four frequencies are 1, 1/10, 1/100 and 1/1000:
    # pe[pos] = (sin pos, cos pos, sin pos/10, cos pos/10, ..., cos pos/1000).
    rates = torch.tensor([1.0, 1e-1, 1e-2, 1e-3], dtype=torch.float64)
    angles = torch.arange(40, dtype=torch.float64)[:, None] * rates  # (40, 4)
    table = torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(40, 8)
    small = module_class(8, 40)
    if list(small.parameters()):
        raise AssertionError(tr("PositionalEncoding has parameters: the sinusoidal table is a buffer, not learned"))
    _near("pe for d_model=8, max_len=40", getattr(small, "pe", None), table[None], 5e-5)
    module = module_class(d_model, 100).eval()
    lookup = nn.Embedding.from_pretrained(module.pe[0])  # PyTorch's lookup holding the same table
    x = torch.randn(3, 17, d_model, generator=torch.Generator().manual_seed(3))
    expected = x + lookup(torch.arange(17))  # (B, L, D)
    with torch.no_grad():
        _near(f"forward for x of shape (3, 17, {d_model}) vs x + nn.Embedding(positions)", module(x), expected, 1e-6)
        inputs = x.to(device).bfloat16()
        output = module.to(device)(inputs)
    # Compared with the input's device, not torch.device(device): "cuda" is not equal to "cuda:0".
    if output.dtype != torch.bfloat16 or output.device != inputs.device:
        raise AssertionError(
            tr(
                "a bfloat16 input on {device} gave {dtype} on {got}: keep x's dtype and device",
                device=device,
                dtype=output.dtype,
                got=output.device,
            )
        )


def check_encoder_layer(module_class: type[nn.Module], device: torch.device | str = "cpu") -> None:
    """Notebook 04's ``EncoderLayer`` against ``nn.TransformerEncoderLayer`` (Post-LN and Pre-LN), on ``device`` too."""
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(2, 6, 16, generator=generator)
    keep = torch.tensor([[True] * 6, [True] * 3 + [False] * 3])  # (B, L)
    for norm_first in (False, True):
        case = "Pre-LN" if norm_first else "Post-LN"
        twin = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
        _randomize_norms(twin, generator)
        layer = module_class(16, 4, 32, norm_first=norm_first).eval()
        copy_weights(twin, layer, ENCODER_RENAMES)
        with torch.no_grad():
            output, _ = _pair(layer(x, keep[:, None, None, :]), "EncoderLayer")
            expected = twin(x, src_key_padding_mask=~keep)
            _near(f"{case} with a padding mask, real tokens", output[keep], expected[keep], 1e-4)
            if torch.device(device).type != "cpu":
                moved, _ = layer.to(device)(x.to(device), keep[:, None, None, :].to(device))
                _near(f"{case} on {device}", moved[keep.to(device)], expected[keep], 1e-3)


def check_decoder_layer(module_class: type[nn.Module]) -> None:
    """Notebook 05's ``DecoderLayer`` against ``nn.TransformerDecoderLayer`` (Post-LN and Pre-LN)."""
    generator = torch.Generator().manual_seed(5)
    x, memory = torch.randn(2, 5, 16, generator=generator), torch.randn(2, 7, 16, generator=generator)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()  # (T, T), True = may attend
    keep = torch.tensor([[True] * 7, [True] * 4 + [False] * 3])  # (B, S)
    for norm_first in (False, True):
        case = "Pre-LN" if norm_first else "Post-LN"
        twin = nn.TransformerDecoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
        _randomize_norms(twin, generator)
        layer = module_class(16, 4, 32, norm_first=norm_first).eval()
        copy_weights(twin, layer, DECODER_RENAMES)
        with torch.no_grad():
            result = layer(x, memory, causal, keep[:, None, None, :])
            if not isinstance(result, tuple) or len(result) != 3:
                raise AssertionError(tr("DecoderLayer should return (x, self_weights, cross_weights)"))
            expected = twin(x, memory, tgt_mask=~causal, memory_key_padding_mask=~keep)
            _near(f"{case} with causal and memory masks", result[0], expected, 1e-4)


# --- loading, checking, choosing --------------------------------------------------------------


@contextlib.contextmanager
def _quiet_rng() -> Iterator[None]:
    """Checks draw random weights; the notebook's own random state is left as it was."""
    with torch.random.fork_rng(devices=[]), contextlib.redirect_stdout(io.StringIO()):
        torch.manual_seed(0)
        yield


def try_check(check: Callable[..., None], *args: object) -> str:
    """'' when ``check(*args)`` passes, else what failed, in one line."""
    try:
        with _quiet_rng():
            check(*args)
    except NotImplementedError:
        return tr("not done yet (NotImplementedError)")
    except AssertionError as error:
        return tr("failed: {error}", error=error).splitlines()[0]
    except Exception as error:  # - a student's module may raise anything
        return tr("failed: {error}", error=f"{type(error).__name__}: {error}").splitlines()[0]
    return ""


def student_object(module: types.ModuleType, errors: Mapping[str, str], name: str) -> object:
    """``module.name``, or an AssertionError saying which answer cell failed to define it."""
    if hasattr(module, name):
        return getattr(module, name)
    why = "; ".join(tr("cell {cell}: {error}", cell=cell, error=error) for cell, error in errors.items())
    raise AssertionError(tr("{name} is not defined ({why})", name=name, why=why or tr("its answer cell is empty")))


class _Notebook:
    """One of the student's notebooks, loaded once (or why it could not be)."""

    def __init__(self, course_dir: Path, name: str) -> None:
        self.name = name
        self.path = notebook_path(course_dir, name)
        self.module = types.ModuleType(name)
        self.errors: dict[str, str] = {}
        self.problem = ""
        try:
            self.module, self.errors = load_answers(self.path)
        except FileNotFoundError:
            self.problem = tr("not found: {path}", path=self.path)
        except Exception as error:  # not JSON, no cells, a setup cell that does not parse or import
            self.problem = tr("could not be read: {error}", error=f"{type(error).__name__}: {error}")

    def checked(self, name: str, check: Callable[..., None], *args: object) -> tuple[object, str]:
        """``(the student's name, '')`` if it passes ``check(it, *args)``, else ``(None, what failed)``."""
        if self.problem:
            return None, self.problem
        try:
            found = student_object(self.module, self.errors, name)
        except AssertionError as error:
            return None, tr("failed: {error}", error=error)
        detail = try_check(check, found, *args)
        return (None, detail) if detail else (found, "")


def load_own_parts(course_dir: Path, d_model: int = 64, device: torch.device | str = "cpu") -> OwnParts:
    """Load and check the student's parts of 01-05 from ``course_dir``; the reference stands in for each failure.

    Each part is first checked alone, with the course's reference modules around it (so a mistake in
    01 is not blamed on 02). Then the student's attention goes into their multi-head attention and
    that into their encoder layer, and the assembled layer is checked once more, on ``device`` too.
    """
    first, second, third, fourth, fifth = (_Notebook(course_dir, name) for name in NOTEBOOKS)
    attention, attention_detail = first.checked("scaled_dot_product_attention", check_attention)
    mha, mha_detail = second.checked("MultiHeadAttention", check_multi_head_attention)
    positions, positions_detail = third.checked("PositionalEncoding", check_positional_encoding, d_model, device)
    layer, layer_detail = fourth.checked("EncoderLayer", check_encoder_layer)
    _, decoder_detail = fifth.checked("DecoderLayer", check_decoder_layer)

    composed_detail, composed = "", layer is not None and mha is not None
    if composed:  # their 04 runs their 02, which runs their 01 (where each is still the reference import)
        if attention is not None and second.module.attention is reference.attention:
            second.module.attention = attention
        if fourth.module.MultiHeadAttention is reference.MultiHeadAttention:
            fourth.module.MultiHeadAttention = mha
        composed_detail = try_check(check_encoder_layer, layer, device)
        if composed_detail:
            second.module.attention = reference.attention
            fourth.module.MultiHeadAttention = reference.MultiHeadAttention
    if layer is not None and (composed_detail or not composed):
        layer_detail = try_check(check_encoder_layer, layer, device)
        layer = None if layer_detail else layer

    mha_used = layer is not None and composed and not composed_detail
    attention_used = mha_used and attention is not None and second.module.attention is attention

    def outcome(notebook: _Notebook, part: str, found: object, detail: str, used: bool, fallback: str) -> Outcome:
        if found is None:
            return Outcome(notebook.name, part, False, detail, fallback)
        shown = tr("yours") if used else tr("checked only: its caller is the reference")
        return Outcome(notebook.name, part, True, "", shown)

    outcomes = [
        outcome(
            first,
            "scaled_dot_product_attention",
            attention,
            attention_detail,
            attention_used,
            tr("reference (F.scaled_dot_product_attention)"),
        ),
        outcome(second, "MultiHeadAttention", mha, mha_detail, mha_used, tr("reference (nn.MultiheadAttention)")),
        outcome(
            third, "PositionalEncoding", positions, positions_detail, True, tr("reference (LearnedPositionalEncoding)")
        ),
        outcome(fourth, "EncoderLayer", layer, layer_detail, True, tr("reference (nn.TransformerEncoderLayer)")),
        Outcome(
            fifth.name, "DecoderLayer", not decoder_detail, decoder_detail, tr("checked only: a classifier has none")
        ),
    ]
    if composed:
        used = tr("yours") if mha_used else tr("your layer, reference attention")
        outcomes.append(
            Outcome(fourth.name, "EncoderLayer + your attention", not composed_detail, composed_detail, used)
        )
    return OwnParts(
        attention=second.module.attention if mha_used else reference.attention,
        multi_head_attention=mha if mha_used else reference.MultiHeadAttention,
        positional_encoding=positions,
        encoder_layer=layer,
        outcomes=outcomes,
    )


# --- the classifier ---------------------------------------------------------------------------


class FirstOutput(nn.Module):
    """Notebook 04's layer returns ``(x, weights)``; notebook 06's classifier wants ``x``."""

    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.layer(x, mask)[0]  # (B, L, D)


def assemble(model: nn.Module, parts: OwnParts, config: Mapping[str, object]) -> nn.Module:
    """Put the student's parts into notebook 06's classifier ``model`` (in place) and return it.

    ``model.positions`` becomes their ``PositionalEncoding`` and each of ``model.layers`` their
    ``EncoderLayer`` holding a copy of the weights the reference layer started with, so both models
    start from the same numbers. ``config`` is the classifier's keyword arguments (``d_model``,
    ``num_heads``, ``d_ff``, ``dropout``, ``max_len``).
    """
    d_model, dropout = config["d_model"], config["dropout"]
    if parts.positional_encoding is not None:
        model.positions = parts.positional_encoding(d_model, config["max_len"], dropout)
    if parts.encoder_layer is not None:
        layers = []
        for old in model.layers:
            layer = parts.encoder_layer(d_model, config["num_heads"], config["d_ff"], dropout)
            if isinstance(getattr(old, "layer", None), nn.TransformerEncoderLayer):
                copy_weights(old.layer, layer, ENCODER_RENAMES)
            layers.append(FirstOutput(layer))
        model.layers = nn.ModuleList(layers)
    return model
