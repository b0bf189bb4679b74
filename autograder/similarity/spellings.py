"""One spelling for each tensor operation, and library calls' arguments bound to their parameter names.

PyTorch spells most operations several ways: an operator (``a @ b``), a function
(``torch.matmul(a, b)``, ``F.softmax(x, -1)``), a method (``a.matmul(b)``, ``x.softmax(-1)``), an
alias (``torch.concat`` for ``torch.cat``, :data:`ALIASES`, PyTorch's own list) or a property
(``x.mT``). A copier swaps one for another and computes the same; :class:`Spellings` rewrites
every one into a single form:

- ``torch.nn.functional.f`` and ``nn.functional.f`` read ``F.f``, ``torch.nn.X`` reads ``nn.X``;
- an alias reads the name it stands for, as function or method;
- a method of :data:`SIGNATURES` reads as the function on its receiver (``x.softmax(-1)`` reads
  ``torch.softmax(x, -1)``), and so do the ``F`` functions that are the same operation
  (:data:`FUNCTIONAL`);
- ``x.size(d)`` reads ``x.shape[d]`` (PyTorch's own alias), ``x.mT`` reads
  ``torch.transpose(x, -2, -1)``, and a transpose's two constant dimensions are put in order
  (``transpose(x, -1, -2)`` is the same operation);
- the arguments after the tensor are bound to their parameter names (:data:`SIGNATURES`), an
  argument equal to its default dropped: ``torch.softmax(x, -1)`` and ``torch.softmax(x, dim=-1)``
  are one spelling; other calls' keywords are put in name order;
- a function with an operator reads as the operator (``torch.matmul(a, b)`` reads ``a @ b``,
  ``torch.ne(a, b)`` reads ``a != b``).

A receiver that is not a tensor (``self``, a module, ``math``) is never rewritten: the rules apply to
what a tensor's methods are, and ``self.dropout(x)`` is a module's call.
"""

import ast

TORCH = "torch"

# PyTorch's aliases: every ``torch`` function whose documentation reads "Alias for torch.X"
# (tests/grader/test_similarity.py checks the table against the installed PyTorch).
ALIASES: dict[str, str] = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "clip": "clamp", "concat": "cat",
    "concatenate": "cat", "divide": "div", "fix": "trunc", "ger": "outer", "greater": "gt",
    "greater_equal": "ge", "less": "lt", "less_equal": "le", "moveaxis": "movedim", "multiply": "mul",
    "negative": "neg", "not_equal": "ne", "row_stack": "vstack", "subtract": "sub", "swapaxes": "transpose",
    "swapdims": "transpose", "trapz": "trapezoid", "true_divide": "div",
}  # fmt: skip

# Operations that are both a ``torch`` function and a tensor method, with the parameters after the
# tensor and their defaults (``None``: no default), as PyTorch's documentation has them (checked by
# the tests). Only operations whose positional order is the documented one are here.
REQUIRED = object()
SIGNATURES: dict[str, tuple[tuple[str, object], ...]] = {
    "abs": (), "exp": (), "log": (), "sqrt": (), "rsqrt": (), "sin": (), "cos": (), "tanh": (), "sigmoid": (),
    "relu": (), "neg": (), "logical_not": (), "bitwise_not": (), "trunc": (),
    "add": (("other", REQUIRED),), "sub": (("other", REQUIRED),), "mul": (("other", REQUIRED),),
    "div": (("other", REQUIRED),), "pow": (("exponent", REQUIRED),), "matmul": (("other", REQUIRED),),
    "eq": (("other", REQUIRED),), "ne": (("other", REQUIRED),), "lt": (("other", REQUIRED),),
    "le": (("other", REQUIRED),), "gt": (("other", REQUIRED),), "ge": (("other", REQUIRED),),
    "logical_and": (("other", REQUIRED),), "logical_or": (("other", REQUIRED),), "outer": (("vec2", REQUIRED),),
    "softmax": (("dim", REQUIRED),), "log_softmax": (("dim", REQUIRED),),
    "transpose": (("dim0", REQUIRED), ("dim1", REQUIRED)), "movedim": (("source", REQUIRED), ("destination", REQUIRED)),
    "tril": (("diagonal", 0),), "triu": (("diagonal", 0),),
    "masked_fill": (("mask", REQUIRED), ("value", REQUIRED)),
    "unsqueeze": (("dim", REQUIRED),), "flatten": (("start_dim", 0), ("end_dim", -1)),
    "argmax": (("dim", None), ("keepdim", False)), "argmin": (("dim", None), ("keepdim", False)),
    "cumsum": (("dim", REQUIRED),), "clamp": (("min", None), ("max", None)),
    "topk": (("k", REQUIRED), ("dim", -1), ("largest", True), ("sorted", True)),
    "multinomial": (("num_samples", REQUIRED), ("replacement", False)),
    "gather": (("dim", REQUIRED), ("index", REQUIRED)), "chunk": (("chunks", REQUIRED), ("dim", 0)),
    "split": (("split_size_or_sections", REQUIRED), ("dim", 0)),
    "roll": (("shifts", REQUIRED), ("dims", None)), "diagonal": (("offset", 0), ("dim1", 0), ("dim2", 1)),
}  # fmt: skip
# Functions only (their first argument is a list of tensors, or they make a tensor).
FUNCTION_SIGNATURES: dict[str, tuple[tuple[str, object], ...]] = {
    "cat": (("tensors", REQUIRED), ("dim", 0)), "stack": (("tensors", REQUIRED), ("dim", 0)),
    "where": (("condition", REQUIRED), ("input", REQUIRED), ("other", REQUIRED)),
}  # fmt: skip
# ``F`` functions that are the ``torch`` function of the same name (same parameters).
FUNCTIONAL = frozenset({"softmax", "log_softmax", "relu", "sigmoid", "tanh"})
# Constructors of ``nn`` whose parameters are bound the same way.
MODULES: dict[str, tuple[tuple[str, object], ...]] = {
    "Linear": (("in_features", REQUIRED), ("out_features", REQUIRED), ("bias", True)),
    "Embedding": (("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED), ("padding_idx", None)),
    "Dropout": (("p", 0.5),), "LayerNorm": (("normalized_shape", REQUIRED), ("eps", 1e-05)),
}  # fmt: skip
OPERATORS: dict[str, ast.operator | ast.cmpop] = {
    "add": ast.Add(), "sub": ast.Sub(), "mul": ast.Mult(), "div": ast.Div(), "pow": ast.Pow(),
    "matmul": ast.MatMult(), "eq": ast.Eq(), "ne": ast.NotEq(), "lt": ast.Lt(), "le": ast.LtE(),
    "gt": ast.Gt(), "ge": ast.GtE(),
}  # fmt: skip
NOT_TENSORS = frozenset({"self", "nn", "F", TORCH, "math", "np", "numpy", "super", "functional"})


def attribute_path(node: ast.expr) -> list[str] | None:
    """``["torch", "nn", "functional", "softmax"]`` for ``torch.nn.functional.softmax``; None if not names."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def path_node(parts: list[str]) -> ast.expr:
    node: ast.expr = ast.Name(parts[0], ast.Load())
    for part in parts[1:]:
        node = ast.Attribute(node, part, ast.Load())
    return node


def short_path(parts: list[str]) -> list[str]:
    """``torch.nn.functional.f`` -> ``F.f``, ``torch.nn.X`` -> ``nn.X``, aliases resolved."""
    if parts[:3] == [TORCH, "nn", "functional"]:
        parts = ["F", *parts[3:]]
    elif parts[:2] == ["nn", "functional"]:
        parts = ["F", *parts[2:]]
    elif parts[:2] == [TORCH, "nn"]:
        parts = ["nn", *parts[2:]]
    if len(parts) == 2 and parts[0] == TORCH:
        parts = [TORCH, ALIASES.get(parts[1], parts[1])]
    if len(parts) == 2 and parts[0] == "F" and parts[1] in FUNCTIONAL:
        parts = [TORCH, parts[1]]
    return parts


def literal(node: ast.expr) -> object:
    """The value of a constant (``-1`` included); :data:`REQUIRED` for anything else."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return REQUIRED


def bind(call: ast.Call, parameters: tuple[tuple[str, object], ...], skip: int) -> bool:
    """The call's arguments after the first ``skip`` as keywords in signature order, defaults dropped.

    False (the call left as it is) when they do not fit the signature.
    """
    names = [name for name, _ in parameters]
    positional = call.args[skip:]
    if len(positional) > len(names) or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    bound = dict(zip(names, positional, strict=False))
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in names or keyword.arg in bound:
            return False
        bound[keyword.arg] = keyword.value
    call.args = call.args[:skip]
    call.keywords = [
        ast.keyword(name, bound[name])
        for name, default in parameters
        if name in bound and (default is REQUIRED or literal(bound[name]) != default)
    ]
    return True


class Spellings(ast.NodeTransformer):
    """Rewrites every spelling of a tensor operation into one (see the module)."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        self.generic_visit(node)
        if node.attr == "mT" and isinstance(node.ctx, ast.Load):
            return self.visit_Call(ast.Call(path_node([TORCH, "transpose"]), [node.value, *constants(-2, -1)], []))
        parts = attribute_path(node)
        if parts and len(parts) > 1 and (shorter := short_path(parts)) != parts:
            return path_node(shorter)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if size := as_shape(node):
            return size
        node = self.as_function(node)
        parts = attribute_path(node.func)
        if parts and len(parts) == 2 and parts[0] == TORCH and parts[1] in SIGNATURES and node.args:
            bind(node, SIGNATURES[parts[1]], 1)
            if parts[1] == "transpose":
                order_dimensions(node)
            return as_operator(parts[1], node)
        if parts and len(parts) == 2 and parts[0] == TORCH and parts[1] in FUNCTION_SIGNATURES:
            bind(node, FUNCTION_SIGNATURES[parts[1]], 0)
        elif parts and len(parts) == 2 and parts[0] == "nn" and parts[1] in MODULES:
            bind(node, MODULES[parts[1]], 0)
        elif not any(k.arg is None for k in node.keywords):
            node.keywords.sort(key=lambda keyword: str(keyword.arg))
        return node

    @staticmethod
    def as_function(node: ast.Call) -> ast.Call:
        """``x.f(...)`` as ``torch.f(x, ...)`` for a tensor method of :data:`SIGNATURES` (aliases resolved)."""
        if not isinstance(node.func, ast.Attribute):
            return node
        name = ALIASES.get(node.func.attr, node.func.attr)
        receiver = node.func.value
        if name not in SIGNATURES or not is_tensor_receiver(receiver):
            return node  # self.dropout(x), self.layer.f(...): a module's call, not a tensor's method
        return ast.Call(path_node([TORCH, name]), [receiver, *node.args], node.keywords)


def is_tensor_receiver(node: ast.expr) -> bool:
    """Whether ``node`` may be a tensor: not a module, ``self`` or one of ``self``'s attributes."""
    parts = attribute_path(node)
    return not (parts and (parts[0] == "self" or (len(parts) == 1 and parts[0] in NOT_TENSORS)))


def as_shape(node: ast.Call) -> ast.expr | None:
    """``x.size(d)`` -> ``x.shape[d]``, ``x.size()`` -> ``x.shape`` (PyTorch's alias); None for other calls."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.keywords):
        return None
    if len(node.args) > 1 or not is_tensor_receiver(node.func.value):
        return None
    shape = ast.Attribute(node.func.value, "shape", ast.Load())
    return ast.Subscript(shape, node.args[0], ast.Load()) if node.args else shape


def constants(*values: int) -> list[ast.expr]:
    return [ast.Constant(v) if v >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-v)) for v in values]


def order_dimensions(call: ast.Call) -> None:
    """``transpose(x, -1, -2)`` -> ``transpose(x, dim0=-2, dim1=-1)``: the same operation."""
    given = {k.arg: k.value for k in call.keywords}
    first, second = literal(given.get("dim0", ast.Name())), literal(given.get("dim1", ast.Name()))
    if isinstance(first, int) and isinstance(second, int) and first > second:
        call.keywords = [ast.keyword("dim0", given["dim1"]), ast.keyword("dim1", given["dim0"])]


def as_operator(name: str, call: ast.Call) -> ast.expr:
    """``torch.matmul(a, b)`` -> ``a @ b`` (and the other operators); the call when it has more than two operands."""
    operator = OPERATORS.get(name)
    if operator is None or len(call.args) != 1 or len(call.keywords) != 1:
        return call
    left, right = call.args[0], call.keywords[0].value
    if isinstance(operator, ast.cmpop):
        return ast.Compare(left, [operator], [right])
    return ast.BinOp(left, operator, right)


def respell(tree: ast.AST) -> ast.AST:
    """``tree`` with one spelling per operation (in place where it can be)."""
    return Spellings().visit(tree)  # no locations needed: the tree is only re-printed
