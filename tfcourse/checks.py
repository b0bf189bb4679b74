"""Visible-test helpers: each failure says what was expected, what came out and the likely cause.

They raise ``AssertionError`` (so nbgrader counts the cell as failed) and print
one line on success, in the CS231n style: ``relative error: 3e-08 (should be < 1e-05)``.
They never return a value, so a test cell that ends with one of them ends in a
statement whose value nbgrader cannot mistake for a score.
"""

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import torch
from torch.overrides import TorchFunctionMode

from tfcourse.messages import tr


def _with_hint(message: str, hint: str) -> str:
    return tr("{message}\nLikely cause: {hint}", message=message, hint=tr(hint)) if hint else message


def passed(what: str) -> str:
    """``<what>: passed`` in the reader's language: a test cell ends with ``print(passed("shapes"))``.

    Returned, not printed: a test cell must end in a ``print`` call, never in an expression with a
    value that nbgrader could read as a score.
    """
    return tr("{what}: passed", what=tr(what))


def relative_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """Largest elementwise ``|a - e| / max(|a| + |e|, 1e-8)``, computed in float64."""
    a = actual.detach().to("cpu", torch.float64)
    e = expected.detach().to("cpu", torch.float64)
    denominator = (a.abs() + e.abs()).clamp_min(1e-8)
    return float(((a - e).abs() / denominator).max()) if a.numel() else 0.0


def check_tensor(name: str, value: object) -> None:
    """Fail unless ``value`` is a ``torch.Tensor``."""
    if not isinstance(value, torch.Tensor):
        raise AssertionError(
            tr(
                "{name} should be a torch.Tensor, got {kind}.\n"
                "Likely cause: the function returns None (a missing `return`) or a Python/NumPy value.",
                name=tr(name),
                kind=type(value).__name__,
            )
        )


def check_shape(name: str, actual: torch.Tensor, expected: Sequence[int], hint: str = "") -> None:
    """Fail unless ``actual.shape == expected``."""
    check_tensor(name, actual)
    if tuple(actual.shape) != tuple(expected):
        raise AssertionError(
            _with_hint(
                tr(
                    "{name} should have shape {expected}, got {got}.",
                    name=tr(name),
                    expected=tuple(expected),
                    got=tuple(actual.shape),
                ),
                hint,
            )
        )


def check_dtype(name: str, actual: torch.Tensor, expected: torch.dtype, hint: str = "") -> None:
    """Fail unless ``actual.dtype == expected``."""
    check_tensor(name, actual)
    if actual.dtype != expected:
        raise AssertionError(
            _with_hint(
                tr(
                    "{name} should have dtype {expected}, got {got}.",
                    name=tr(name),
                    expected=expected,
                    got=actual.dtype,
                ),
                hint,
            )
        )


def check_finite(name: str, actual: torch.Tensor, hint: str = "") -> None:
    """Fail if ``actual`` holds any NaN or infinity."""
    check_tensor(name, actual)
    bad = ~torch.isfinite(actual.float())
    if bad.any():
        first = tuple(int(i) for i in bad.nonzero()[0])
        raise AssertionError(
            _with_hint(
                tr(
                    "{name} should hold only finite numbers, but {count} entries are NaN or inf "
                    "(the first at index {first}).",
                    name=tr(name),
                    count=int(bad.sum()),
                    first=first,
                ),
                hint,
            )
        )


def check_equal(name: str, actual: torch.Tensor, expected: torch.Tensor, hint: str = "") -> None:
    """Fail unless the two tensors have the same shape and exactly the same values."""
    check_shape(name, actual, expected.shape, hint)
    if not torch.equal(actual.to(expected.device), expected.to(actual.dtype)):
        where = (actual.to(expected.device) != expected.to(actual.dtype)).nonzero()[0]
        index = tuple(int(i) for i in where)
        raise AssertionError(
            _with_hint(
                tr(
                    "{name} differs from the expected tensor at index {index}: "
                    "expected {expected_value}, got {got_value}.\n"
                    "expected:\n{expected}\ngot:\n{got}",
                    name=tr(name),
                    index=index,
                    expected_value=expected[index].item(),
                    got_value=actual[index].item(),
                    expected=expected,
                    got=actual,
                ),
                hint,
            )
        )
    print(tr("{name}: exact match", name=tr(name)))


def check_expected_is_a_number(name: str, expected: torch.Tensor, hint: str = "") -> None:
    """Fail if the tensor ``name`` is compared with holds NaN: no answer is close to it.

    The value compared with is often the student's own code on other inputs (the same model without padding),
    and NaN there most often comes from a softmax over a row whose every position is masked.
    """
    missing = torch.isnan(expected.detach()) if expected.is_floating_point() or expected.is_complex() else None
    if missing is None or not missing.any():
        return
    raise AssertionError(
        _with_hint(
            tr(
                "{name}: the value it is compared with holds NaN where a number was expected, in {count} of {total} "
                "entries (the first at index {first}), so no answer can match it. NaN comes, for example, from a "
                "softmax over a row whose every position is masked: 0 / 0. Is a mask inverted, or does it block "
                "every position of a row?",
                name=tr(name),
                count=int(missing.sum()),
                total=missing.numel(),
                first=tuple(int(i) for i in missing.nonzero()[0]),
            ),
            hint,
        )
    )


def check_close(
    name: str,
    actual: torch.Tensor,
    expected: torch.Tensor,
    tolerance: float = 1e-5,
    hint: str = "",
) -> None:
    """Fail unless the largest relative error is below ``tolerance``; print it either way."""
    check_shape(name, actual, expected.shape, hint)
    check_finite(name, actual, hint)
    check_expected_is_a_number(name, expected, hint)
    error = relative_error(actual, expected)
    verdict = tr("{name}: relative error {error:.1e} (should be < {tolerance:.0e})", name=tr(name), error=error,
                 tolerance=tolerance)
    if not error < tolerance:
        diff = (actual.detach().cpu().double() - expected.detach().cpu().double()).abs()
        index = tuple(int(i) for i in torch.nonzero(diff == diff.max())[0])
        raise AssertionError(
            _with_hint(
                tr(
                    "{verdict}. The largest difference is at index {index}: expected {expected:.6g}, got {got:.6g}.",
                    verdict=verdict,
                    index=index,
                    expected=expected[index].item(),
                    got=actual[index].item(),
                ),
                hint,
            )
        )
    print(verdict)


def check_near(name: str, actual: torch.Tensor, expected: torch.Tensor, max_diff: float, hint: str = "") -> None:
    """Fail unless the largest absolute difference is below ``max_diff`` (for low-precision dtypes)."""
    check_shape(name, actual, expected.shape, hint)
    check_finite(name, actual, hint)
    diff = float((actual.detach().cpu().double() - expected.detach().cpu().double()).abs().max())
    verdict = tr("{name}: max absolute difference {diff:.1e} (should be < {max_diff:.0e})", name=tr(name), diff=diff,
                 max_diff=max_diff)
    if not diff < max_diff:
        raise AssertionError(_with_hint(tr("{verdict}.", verdict=verdict), hint))
    print(verdict)


class _CallRecorder(TorchFunctionMode):
    """Records which of the given PyTorch functions run, however the caller imported them."""

    def __init__(self, functions: Sequence[Callable]):
        super().__init__()
        self.functions = set(functions)
        self.called: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in self.functions:
            self.called.append(getattr(func, "__name__", repr(func)))
        return func(*args, **(kwargs or {}))


@contextmanager
def check_rebuilt_without(exercise: str, *functions: Callable) -> Iterator[None]:
    """Fail if code run inside the ``with`` block calls one of ``functions``.

    An exercise that rebuilds a PyTorch built-in (``F.scaled_dot_product_attention``,
    ``nn.MultiheadAttention``) must not simply call it. PyTorch's function-override hook
    sees every such call, whatever name or import path the caller used.
    """
    recorder = _CallRecorder(functions)
    with recorder:
        yield
    if recorder.called:
        raise AssertionError(
            tr(
                "{exercise} calls torch's own {function}: this exercise asks you to build that "
                "from tensor operations, so the built-in cannot earn its points.",
                exercise=exercise,
                function=recorder.called[0],
            )
        )
