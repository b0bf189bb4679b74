"""Calls PyTorch documents as equal to other calls, read as those (after :mod:`.spellings`).

Each rule is PyTorch's own text (tests/grader/test_similarity.py checks it against the installed
PyTorch), not a list of the disguises the tests plant:

- ``F.nll_loss(torch.log_softmax(x, 1), y, ...)`` reads ``F.cross_entropy(x, y, ...)``: for class
  indices, cross entropy "is equivalent to applying LogSoftmax on an input, followed by NLLLoss"
  (``nn.CrossEntropyLoss``), LogSoftmax over the class dimension, 1 (-1 too: the same dimension on the
  (N, C) logits the course's losses take);
- ``torch.zeros_like(x)`` "is equivalent to ``torch.zeros(input.size(), dtype=input.dtype, layout=input.layout,
  device=input.device)``" (and ``ones``, ``empty``, ``full``); ``x.new_zeros(size)``: "By default, the returned
  Tensor has the same torch.dtype and torch.device as this tensor" (and ``new_ones``, ``new_empty``,
  ``new_full``): both read ``torch.zeros(size, device=x.device, dtype=x.dtype)``, keywords given kept;
  the sizes of ``torch.zeros(a, b)`` read as one tuple, ``torch.zeros((a, b))``;
- ``x.select(d, i)``: "``tensor.select(2, index)`` is equivalent to ``tensor[:,:,index]``" (a negative ``d``
  counts from the end: ``x.select(-1, i)`` reads ``x[..., i]``);
- what returns its input's values: ``x.clone()``, ``x.contiguous()``, ``torch.as_tensor(x)`` of a tensor ("If
  data is already a tensor with the requested dtype and device then data itself is returned"), read as ``x``.
"""

import ast

from autograder.similarity.spellings import TORCH, attribute_path, is_tensor_receiver, literal, path_node

MAKERS = ("zeros", "ones", "empty", "full")  # torch.X, torch.X_like, tensor.new_X
IDENTITIES = frozenset({"clone", "contiguous"})  # tensor methods that return the same values (no arguments)
CLASS_DIMENSIONS = (1, -1)


def like(source: ast.expr, attribute: str) -> ast.expr:
    return ast.Attribute(source, attribute, ast.Load())


def maker(kind: str, size: ast.expr, rest: list[ast.expr], keywords: list[ast.keyword], source: ast.expr) -> ast.Call:
    """``torch.<kind>(size, *rest, device=source.device, dtype=source.dtype, **keywords)``, keywords in name order."""
    given = {k.arg for k in keywords}
    implied = [ast.keyword(name, like(source, name)) for name in ("device", "dtype") if name not in given]
    found = sorted([*keywords, *implied], key=lambda k: str(k.arg))
    return ast.Call(path_node([TORCH, kind]), [size, *rest], found)


def one_size(call: ast.Call, kind: str) -> ast.Call:
    """``torch.zeros(a, b)`` as ``torch.zeros((a, b))`` (``torch.full``'s size is already one argument)."""
    if kind != "full" and len(call.args) > 1 and not any(isinstance(a, ast.Starred) for a in call.args):
        call.args = [ast.Tuple(call.args, ast.Load())]
    return call


def selected(source: ast.expr, dimension: object, index: ast.expr) -> ast.expr | None:
    if not isinstance(dimension, int) or isinstance(dimension, bool):
        return None
    if dimension >= 0:
        parts: list[ast.expr] = [ast.Slice() for _ in range(dimension)] + [index]
    else:
        parts = [ast.Constant(...), index] + [ast.Slice() for _ in range(-dimension - 1)]
    return ast.Subscript(source, parts[0] if len(parts) == 1 else ast.Tuple(parts, ast.Load()), ast.Load())


class Equivalences(ast.NodeTransformer):
    """Rewrites each call of the module's list into its equal."""

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        parts = attribute_path(node.func) or []
        if parts == ["F", "nll_loss"] and node.args and (inner := log_softmax_input(node.args[0])) is not None:
            return ast.Call(path_node(["F", "cross_entropy"]), [inner, *node.args[1:]], node.keywords)
        if len(parts) == 2 and parts[0] == TORCH:
            return self.torch_function(node, parts[1])
        if isinstance(node.func, ast.Attribute) and is_tensor_receiver(node.func.value):
            return self.tensor_method(node, node.func.attr, node.func.value)
        return node

    @staticmethod
    def torch_function(node: ast.Call, name: str) -> ast.expr:
        if name in MAKERS:
            return one_size(node, name)
        kind = name.removesuffix("_like")
        if kind in MAKERS and kind != name and node.args:
            source = node.args[0]
            return maker(kind, like(source, "shape"), node.args[1:], node.keywords, source)
        if name == "as_tensor" and len(node.args) == 1 and not node.keywords and not literal_data(node.args[0]):
            return node.args[0]
        return node

    @staticmethod
    def tensor_method(node: ast.Call, name: str, source: ast.expr) -> ast.expr:
        kind = name.removeprefix("new_")
        if kind in MAKERS and kind != name and node.args:
            size = node.args[0] if len(node.args) == 1 or kind == "full" else ast.Tuple(node.args, ast.Load())
            rest = node.args[1:] if kind == "full" else []
            return maker(kind, size, rest, node.keywords, source)
        if name in IDENTITIES and not node.args and not node.keywords:
            return source
        if name == "select" and len(node.args) == 2 and not node.keywords:
            return selected(source, literal(node.args[0]), node.args[1]) or node
        return node


def literal_data(node: ast.expr) -> bool:
    """Data that is not a tensor yet (a list, tuple or number): ``torch.as_tensor`` of it makes one."""
    return isinstance(node, ast.List | ast.Tuple | ast.Constant | ast.ListComp)


def log_softmax_input(node: ast.expr) -> ast.expr | None:
    """``x`` of ``torch.log_softmax(x, dim=1)`` (or -1), as :mod:`.spellings` prints it; None for anything else."""
    if not (isinstance(node, ast.Call) and attribute_path(node.func) == [TORCH, "log_softmax"] and len(node.args) == 1):
        return None
    dims = [k.value for k in node.keywords if k.arg == "dim"]
    if len(node.keywords) != 1 or len(dims) != 1 or literal(dims[0]) not in CLASS_DIMENSIONS:
        return None
    return node.args[0]


def equivalences(tree: ast.AST) -> ast.AST:
    """``tree`` with each documented equal call as its equal (in place where it can be)."""
    return Equivalences().visit(tree)
