"""One spelling for each tensor operation, and library calls' arguments bound to their parameter names.

PyTorch spells most operations several ways (operator, function, method, alias, property); a copier
swaps one for another and computes the same. :class:`Spellings` rewrites every one into a single
form, as docs/similarity.md lists ("What is compared", *one spelling per tensor operation*):
``x.softmax(-1)``, ``F.softmax(x, dim=-1)`` and ``torch.softmax(x, -1)`` all read
``torch.softmax(x, dim=-1)``, ``torch.matmul(a, b)`` reads ``a @ b``, ``x.mul_(y)`` reads ``x = x * y``.

Every table is PyTorch's own text (each entry says where it comes from; the tests check them
against the installed PyTorch), not a list of the disguises the tests plant.

A receiver that is not a tensor (``self``, a module, ``math``) is never rewritten: the rules apply to
what a tensor's methods are, and ``self.dropout(x)`` is a module's call.
"""

import ast
import copy

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
}

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
    "logical_and": (("other", REQUIRED),), "logical_or": (("other", REQUIRED),), "logical_xor": (("other", REQUIRED),),
    "bitwise_and": (("other", REQUIRED),), "bitwise_or": (("other", REQUIRED),), "bitwise_xor": (("other", REQUIRED),),
    "outer": (("vec2", REQUIRED),),
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
}
# Functions only (their first argument is a list of tensors, or they make a tensor).
FUNCTION_SIGNATURES: dict[str, tuple[tuple[str, object], ...]] = {
    "cat": (("tensors", REQUIRED), ("dim", 0)), "stack": (("tensors", REQUIRED), ("dim", 0)),
    "where": (("condition", REQUIRED), ("input", REQUIRED), ("other", REQUIRED)),
}
# ``F`` functions that are the ``torch`` function of the same name (same parameters).
FUNCTIONAL = frozenset({"softmax", "log_softmax", "relu", "sigmoid", "tanh"})
# Constructors of ``nn`` whose parameters are bound the same way.
MODULES: dict[str, tuple[tuple[str, object], ...]] = {
    "Linear": (("in_features", REQUIRED), ("out_features", REQUIRED), ("bias", True)),
    "Embedding": (("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED), ("padding_idx", None)),
    "Dropout": (("p", 0.5),), "LayerNorm": (("normalized_shape", REQUIRED), ("eps", 1e-05)),
}
OPERATORS: dict[str, ast.operator | ast.cmpop] = {
    "add": ast.Add(), "sub": ast.Sub(), "mul": ast.Mult(), "div": ast.Div(), "pow": ast.Pow(),
    "matmul": ast.MatMult(), "eq": ast.Eq(), "ne": ast.NotEq(), "lt": ast.Lt(), "le": ast.LtE(),
    "gt": ast.Gt(), "ge": ast.GtE(),
    # PyTorch: "For bool tensors, it computes the logical AND" (OR, XOR, NOT) of bitwise_and (...), which
    # ``&`` (``|``, ``^``, ``~``) calls; masks are bool tensors.
    "bitwise_and": ast.BitAnd(), "logical_and": ast.BitAnd(), "bitwise_or": ast.BitOr(), "logical_or": ast.BitOr(),
    "bitwise_xor": ast.BitXor(), "logical_xor": ast.BitXor(),
}
UNARY: dict[str, ast.unaryop] = {"neg": ast.USub(), "bitwise_not": ast.Invert(), "logical_not": ast.Invert()}
# The operations of SIGNATURES whose in-place method (``x.mul_(y)``) PyTorch documents as "In-place version of
# :meth:`~Tensor.mul`" (or the other way round: ``masked_fill`` is the "Out-of-place version of ... masked_fill_"):
# ``x.mul_(y)`` as a statement reads ``x = x * y``, as ``x *= y`` does.
IN_PLACE = frozenset({
    "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "neg", "logical_not", "bitwise_not",
    "trunc", "add", "sub", "mul", "div", "pow", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "transpose", "tril", "triu", "masked_fill",
    "unsqueeze", "cumsum", "clamp",
})
# ``torch.nn.init``'s initialisers without the trailing ``_``, each documented as "now deprecated in favor of
# :func:`torch.nn.init.X_`": the same function.
DEPRECATED_INIT = frozenset({
    "constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal", "orthogonal", "sparse", "uniform",
    "xavier_normal", "xavier_uniform",
})
# Square roots as powers: PyTorch documents ``torch.sqrt`` as out = sqrt(input) and ``torch.rsqrt`` as
# out = 1 / sqrt(input); ``math.sqrt`` (Python: "Return the square root of x") is the same on a number.
ROOTS: dict[tuple[str, str], float] = {(TORCH, "sqrt"): 0.5, (TORCH, "rsqrt"): -0.5, ("math", "sqrt"): 0.5}
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
    if len(parts) == 3 and parts[:2] == ["nn", "init"] and parts[2] in DEPRECATED_INIT:
        parts = ["nn", "init", f"{parts[2]}_"]
    return parts


def literal(node: ast.expr) -> object:
    """The value of a constant (``-1`` included); :data:`REQUIRED` for anything else."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return REQUIRED


def given(call: ast.Call, names: list[str], skip: int = 0) -> dict[str, ast.expr] | None:
    """The call's arguments after the first ``skip``, by parameter name; None when they do not fit ``names``."""
    positional = call.args[skip:]
    if len(positional) > len(names) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    bound = dict(zip(names, positional, strict=False))
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in names or keyword.arg in bound:
            return None
        bound[keyword.arg] = keyword.value
    return bound


def bind(call: ast.Call, parameters: tuple[tuple[str, object], ...], skip: int) -> bool:
    """The call's arguments after the first ``skip`` as keywords in signature order, defaults dropped.

    False (the call left as it is) when they do not fit the signature.
    """
    bound = given(call, [name for name, _ in parameters], skip)
    if bound is None:
        return False
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
            return self.visit_Call(ast.Call(path_node([TORCH, "transpose"]), [node.value, number(-2), number(-1)], []))
        parts = attribute_path(node)
        if parts and len(parts) > 1 and (shorter := short_path(parts)) != parts:
            return path_node(shorter)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        """``x.mul_(y)`` as a statement reads ``x = x * y`` (:data:`IN_PLACE`)."""
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr.endswith("_"):
            name, receiver = ALIASES.get(call.func.attr[:-1], call.func.attr[:-1]), call.func.value
            if name in IN_PLACE and isinstance(receiver, ast.Name | ast.Subscript) and is_tensor_receiver(receiver):
                target = copy.copy(receiver)
                target.ctx = ast.Store()
                value = ast.Call(ast.Attribute(receiver, name, ast.Load()), call.args, call.keywords)
                return self.visit(ast.Assign([target], value))
        self.generic_visit(node)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.stmt:
        """``x += y`` reads ``x = x + y`` (Python: "can be rewritten as", in place where the type allows)."""
        if not isinstance(node.target, ast.Name | ast.Subscript):
            self.generic_visit(node)
            return node
        read = copy.copy(node.target)
        read.ctx = ast.Load()
        return self.visit(ast.Assign([node.target], ast.BinOp(read, node.op, node.value)))

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        return as_power(node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if size := as_shape(node):
            return size
        node = self.as_function(node)
        parts = attribute_path(node.func)
        if parts and tuple(parts) in ROOTS and len(node.args) == 1 and not node.keywords:
            return as_power(ast.BinOp(node.args[0], ast.Pow(), number(ROOTS[parts[0], parts[1]])))
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


def order_dimensions(call: ast.Call) -> None:
    """``transpose(x, -1, -2)`` -> ``transpose(x, dim0=-2, dim1=-1)``: the same operation."""
    given = {k.arg: k.value for k in call.keywords}
    first, second = literal(given.get("dim0", ast.Name())), literal(given.get("dim1", ast.Name()))
    if isinstance(first, int) and isinstance(second, int) and first > second:
        call.keywords = [ast.keyword("dim0", given["dim1"]), ast.keyword("dim1", given["dim0"])]


def as_operator(name: str, call: ast.Call) -> ast.expr:
    """``torch.matmul(a, b)`` -> ``a @ b``, ``torch.neg(x)`` -> ``-x`` (and the other operators); the call when it
    has other operands."""
    if name in UNARY and len(call.args) == 1 and not call.keywords:
        return ast.UnaryOp(UNARY[name], call.args[0])
    operator = OPERATORS.get(name)
    if operator is None or len(call.args) != 1 or len(call.keywords) != 1:
        return call
    left, right = call.args[0], call.keywords[0].value
    if isinstance(operator, ast.cmpop):
        return ast.Compare(left, [operator], [right])
    return as_power(ast.BinOp(left, operator, right))


def number(value: float) -> ast.expr:
    """A number as :func:`ast.parse` reads it (``-0.5`` is a minus on ``0.5``)."""
    return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0 else ast.Constant(value)


def exponent(node: ast.expr) -> float | None:
    """The constant exponent of ``e ** c``; None for anything else."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)):
        return None
    value = literal(node.right)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def as_power(node: ast.BinOp) -> ast.expr:
    """``1 / e ** c`` -> ``e ** -c`` and ``a * e ** -c`` -> ``a / e ** c``: one spelling of a division by a root."""
    if isinstance(node.op, ast.Div) and literal(node.left) == 1 and (power := exponent(node.right)) is not None:
        return ast.BinOp(node.right.left, ast.Pow(), number(-power))
    if isinstance(node.op, ast.Mult):
        for base, other in ((node.right, node.left), (node.left, node.right)):
            if (power := exponent(base)) is not None and power < 0:
                return ast.BinOp(other, ast.Div(), ast.BinOp(base.left, ast.Pow(), number(-power)))
    return node


def respell(tree: ast.AST) -> ast.AST:
    """``tree`` with one spelling per operation (in place where it can be)."""
    return Spellings().visit(tree)  # no locations needed: the tree is only re-printed
