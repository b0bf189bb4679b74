"""Disguises a copier uses that the usual one (rename, reorder, re-comment) does not: one function per family.

Each takes an answer's syntax tree and rewrites it in place so that it computes exactly what it
computed (tests/grader/test_similarity.py runs the reference answers of 01 before and after) and
says whether it changed anything. :data:`FAMILIES` names them; :func:`disguised` applies some.

- ``synonyms``: another spelling of the same tensor operation (``a @ b`` as ``torch.matmul(a, b)``,
  ``x.transpose(-2, -1)`` as ``x.mT``, ``x.softmax(d)`` as ``torch.softmax(x, d)``, ``torch.tril(x)``
  as ``x.tril()`` and back, ``torch.cat`` as ``torch.concat``, ``x.size(d)`` as ``x.shape[d]``);
- ``keywords``: a library call's positional arguments as keywords, and keywords as positional;
- ``annotations``: type hints on parameters, returns and the first assignment of each function;
- ``asserts``: ``assert name is not None`` after assignments of computed values;
- ``dead_code``: an assignment never read, an ``if False:`` branch, ``* 1`` on a division and a
  function nothing calls;
- ``helper``: a function's body moved into a helper in a cell the student added, called from the answer;
- ``temporary``: a parameter read twice or more read through a temporary (``q = query``);
- ``own_keywords``: the calls of the student's own functions and classes and of the course's (the
  release's code, what it imports from ``tfcourse``), a module's ``forward`` through ``self.<module>``
  included, with their arguments after the first as keywords;
- ``operators``: tensor arithmetic as PyTorch's functions (``a * b`` as ``torch.mul(a, b)``, ``a / b``
  as ``torch.true_divide(a, b)``, ``a & b`` as ``torch.logical_and(a, b)``, ``~m`` as ``m.logical_not()``),
  ``math.sqrt(e)`` as ``e ** 0.5``, ``x = x.masked_fill(...)`` as ``x.masked_fill_(...)`` on a tensor the
  function made, ``nn.init.f_`` as its older name ``nn.init.f``.
"""

import ast
import functools
import importlib
import inspect

from autograder.course.settings import release_notebook
from autograder.similarity.answers import release_code
from tests.support.notebooks import read

FAMILIES = (
    "synonyms",
    "keywords",
    "annotations",
    "asserts",
    "dead_code",
    "helper",
    "temporary",
    "own_keywords",
    "operators",
)
TRIPLES = (("synonyms", "keywords", "dead_code"), ("annotations", "asserts", "helper"),
           ("helper", "temporary", "synonyms"), ("annotations", "asserts", "own_keywords"),
           ("operators", "own_keywords", "temporary"))  # fmt: skip
# Parameter names of library calls a student spells either way (positional <-> keyword).
PARAMETERS = {
    "softmax": ("dim",), "log_softmax": ("dim",), "transpose": ("dim0", "dim1"), "masked_fill": ("mask", "value"),
    "cat": ("tensors", "dim"), "stack": ("tensors", "dim"), "Linear": ("in_features", "out_features"),
    "Embedding": ("num_embeddings", "embedding_dim"), "Dropout": ("p",), "LayerNorm": ("normalized_shape",),
    "unsqueeze": ("dim",), "tril": ("diagonal",), "triu": ("diagonal",),
}  # fmt: skip
FUNCTIONS = frozenset({"cat", "stack", "Linear", "Embedding", "Dropout", "LayerNorm"})  # no receiver argument


def name(value: str) -> ast.Name:
    return ast.Name(value, ast.Load())


def torch_call(function: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(ast.Attribute(name("torch"), function, ast.Load()), args, [])


def minus(node: ast.expr) -> int | None:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    return value if isinstance(value, int) else None


class Synonyms(ast.NodeTransformer):
    def __init__(self) -> None:
        self.changed = False

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            self.changed = True
            return torch_call("matmul", [node.left, node.right])
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Attribute):
            return node
        receiver = func.value
        is_torch = isinstance(receiver, ast.Name) and receiver.id == "torch"
        if func.attr == "transpose" and not is_torch and not node.keywords and len(node.args) == 2:
            if {minus(node.args[0]), minus(node.args[1])} == {-2, -1}:
                self.changed = True
                return ast.Attribute(receiver, "mT", ast.Load())
        if func.attr in ("softmax", "log_softmax") and not is_torch and isinstance(receiver, ast.Name | ast.Call):
            if not (isinstance(receiver, ast.Name) and receiver.id in ("F", "self", "nn")):
                self.changed = True
                return ast.Call(ast.Attribute(name("torch"), func.attr, ast.Load()), [receiver, *node.args],
                                node.keywords)  # fmt: skip
        if func.attr in ("tril", "triu") and is_torch and len(node.args) == 1:
            self.changed = True
            return ast.Call(ast.Attribute(node.args[0], func.attr, ast.Load()), [], node.keywords)
        if func.attr in ("tril", "triu") and not is_torch and not node.args and not node.keywords:
            self.changed = True
            return torch_call(func.attr, [receiver])
        if func.attr == "cat" and is_torch:
            self.changed = True
            func.attr = "concat"
        if func.attr == "size" and len(node.args) == 1 and not node.keywords and not is_torch:
            self.changed = True
            return ast.Subscript(ast.Attribute(receiver, "shape", ast.Load()), node.args[0], ast.Load())
        return node


class Keywords(ast.NodeTransformer):
    def __init__(self) -> None:
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        if called not in PARAMETERS or (called not in FUNCTIONS and isinstance(receiver, ast.Name)
                                        and receiver.id in ("torch", "F", "self", "nn")):  # fmt: skip
            return node
        parameters = PARAMETERS[called]
        if any(isinstance(a, ast.Starred) for a in node.args) or len(node.args) > len(parameters):
            return node
        if node.args:  # positional -> keyword
            node.keywords = [ast.keyword(p, a) for p, a in zip(parameters, node.args, strict=False)] + node.keywords
            node.args = []
            self.changed = True
        return node


def rewrote(rewriter: ast.NodeTransformer, tree: ast.Module) -> bool:
    """Whether ``rewriter`` (which sets ``changed`` when it rewrites a node) changed ``tree``."""
    rewriter.visit(tree)
    return rewriter.changed


def functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]


def synonyms(tree: ast.Module) -> bool:
    return rewrote(Synonyms(), tree)


def keywords(tree: ast.Module) -> bool:
    return rewrote(Keywords(), tree)


def annotations(tree: ast.Module) -> bool:
    changed = False
    for function in functions(tree):
        for argument in function.args.args:
            if argument.arg != "self" and argument.annotation is None:
                argument.annotation = ast.Attribute(name("torch"), "Tensor", ast.Load())
                changed = True
        if function.returns is None and function.name != "__init__":
            function.returns = ast.Attribute(name("torch"), "Tensor", ast.Load())
            changed = True
        for index, statement in enumerate(function.body):
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name):
                    annotation = ast.Attribute(name("torch"), "Tensor", ast.Load())
                    function.body[index] = ast.AnnAssign(target, annotation, statement.value, simple=1)
                    changed = True
                    break
    return changed


def computed(statement: ast.stmt) -> str | None:
    """The name a statement assigns a computed value (a call or an operation) to, or None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        if isinstance(statement.value, ast.Call | ast.BinOp):  # not an item: ``caches[i]`` may be None
            return statement.targets[0].id
    return None


def asserts(tree: ast.Module) -> bool:
    changed = False
    for function in functions(tree):
        body = []
        for statement in function.body:
            body.append(statement)
            if target := computed(statement):
                test = ast.Compare(name(target), [ast.IsNot()], [ast.Constant(None)])
                body.append(ast.Assert(test, ast.Constant(f"{target} was not computed")))
                changed = True
        function.body = body
    return changed


def dead_code(tree: ast.Module) -> bool:
    """Always changes something: at least the function nothing calls."""
    for function in functions(tree):
        parameters = [a.arg for a in function.args.args if a.arg != "self"]
        if parameters:
            function.body.insert(0, ast.Assign([ast.Name("unused_copy", ast.Store())], name(parameters[0])))
        debug = ast.If(ast.Constant(False), [ast.Expr(ast.Call(name("print"), [ast.Constant("debug")], []))], [])
        function.body.insert(len(function.body) - 1, debug)
    for node in ast.walk(tree):
        for field in ("value", "left", "right"):
            child = getattr(node, field, None)
            if isinstance(child, ast.BinOp) and isinstance(child.op, ast.Div):
                setattr(node, field, ast.BinOp(child, ast.Mult(), ast.Constant(1)))
                break
        else:
            continue
        break
    tree.body.append(ast.parse("def _check_shapes(x):\n    return x.shape\n").body[0])
    return True


def movable(function: ast.FunctionDef) -> bool:
    """A body of two statements or more that ends in its only ``return`` and uses neither ``super()`` nor yields."""
    last = function.body[-1]
    if len(function.body) < 2 or not isinstance(last, ast.Return) or last.value is None:
        return False
    if function.args.vararg or function.args.kwarg or function.args.kwonlyargs or function.args.posonlyargs:
        return False
    inner = [n for s in function.body[:-1] for n in ast.walk(s)] + list(ast.walk(last.value))
    barred = ast.Return | ast.Yield | ast.YieldFrom | ast.FunctionDef | ast.Lambda | ast.Global | ast.Nonlocal
    return not any(isinstance(n, barred) or (isinstance(n, ast.Name) and n.id == "super") for n in inner)


def outer_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """Top-level functions and the methods of top-level classes (no closures)."""
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        found += [n for n in cls.body if isinstance(n, ast.FunctionDef)]
    return found


def helper(tree: ast.Module, added: list[str]) -> bool:
    """The first movable function's body becomes ``_<name>_impl`` in an added cell (appended to ``added``)."""
    for function in outer_functions(tree):
        if movable(function):
            parameters = [a.arg for a in function.args.args]
            signature = ast.arguments([], [ast.arg(p) for p in parameters], None, [], [], None, [])
            moved = ast.FunctionDef(f"_{function.name}_impl{len(added)}", signature, function.body, [], None,
                                    type_params=[])  # fmt: skip
            added.append(ast.unparse(ast.fix_missing_locations(moved)))
            call = ast.Call(name(moved.name), [name(p) for p in parameters], [])
            function.body = [ast.Return(call)]
            return True
    return False


def temporary(tree: ast.Module) -> bool:
    """In each function, a parameter read twice or more (never assigned) read through ``<name>_in``."""
    changed = False
    for function in functions(tree):
        nodes = [n for s in function.body for n in ast.walk(s) if isinstance(n, ast.Name)]
        stored = {n.id for n in nodes if not isinstance(n.ctx, ast.Load)}
        for argument in function.args.args:
            reads = [n for n in nodes if n.id == argument.arg and isinstance(n.ctx, ast.Load)]
            if argument.arg != "self" and argument.arg not in stored and len(reads) >= 2:
                for node in reads:
                    node.id = f"{argument.arg}_in"
                function.body.insert(0, ast.Assign([ast.Name(f"{argument.arg}_in", ast.Store())], name(argument.arg)))
                changed = True
                break
    return changed


Parameters = dict[str, tuple[str, ...]]  # callee -> its parameters that may be passed by keyword, in order


def keyword_parameters(function: object, method: bool) -> tuple[str, ...]:
    """The leading parameters of ``function`` (its signature, from Python) that may be passed by keyword."""
    found = []
    for parameter in list(inspect.signature(function).parameters.values())[1 if method else 0 :]:
        if parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        found.append(parameter.name)
    return tuple(found)


def defined_parameters(tree: ast.Module) -> Parameters:
    """The functions and classes ``tree`` defines (a class by its ``__init__``, methods as ``Class.method``)."""
    found: Parameters = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.args.posonlyargs:
            found[node.name] = tuple(a.arg for a in node.args.args)
        elif isinstance(node, ast.ClassDef):
            for method in (m for m in node.body if isinstance(m, ast.FunctionDef) and not m.args.posonlyargs):
                parameters = tuple(a.arg for a in method.args.args[1:])
                found[node.name if method.name == "__init__" else f"{node.name}.{method.name}"] = parameters
    return found


@functools.cache
def course_parameters(assignment: str) -> Parameters:
    """The course's callees for one notebook: what its release's code defines, and what it imports from
    ``tfcourse`` (their signatures read from the imported objects)."""
    code = "\n".join(line for line in release_code(read(release_notebook(assignment))).splitlines()
                     if not line.lstrip().startswith(("%", "!")))  # fmt: skip
    tree = ast.parse(code)
    found: Parameters = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tfcourse"):
            module = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(module, alias.name, None)
                if inspect.isclass(value):
                    found[alias.asname or alias.name] = keyword_parameters(value.__init__, method=True)
                    if "forward" in vars(value):
                        found[f"{alias.asname or alias.name}.forward"] = keyword_parameters(value.forward, True)
                elif inspect.isfunction(value):
                    found[alias.asname or alias.name] = keyword_parameters(value, method=False)
    return found | defined_parameters(tree)


def module_classes(cls: ast.ClassDef, known: Parameters) -> dict[str, str]:
    """``self.a = C(...)`` in a class, C known: a -> C."""
    found = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
            target, value = node.targets[0], node.value
            if isinstance(target.value, ast.Name) and target.value.id == "self" and isinstance(value, ast.Call):
                if isinstance(value.func, ast.Name) and value.func.id in known:
                    found[target.attr] = value.func.id
    return found


class OwnKeywords(ast.NodeTransformer):
    def __init__(self, known: Parameters) -> None:
        self.known = known
        self.cls = ""
        self.modules: dict[str, str] = {}
        self.changed = False

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        self.cls, self.modules = node.name, module_classes(node, self.known)
        self.generic_visit(node)
        self.cls, self.modules = "", {}
        return node

    def callee(self, func: ast.expr) -> str:
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            return f"{self.modules[func.attr]}.forward" if func.attr in self.modules else f"{self.cls}.{func.attr}"
        return ""

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        parameters = self.known.get(self.callee(node.func))
        if parameters is None or any(isinstance(a, ast.Starred) for a in node.args):
            return node
        if 1 < len(node.args) <= len(parameters):
            given = [ast.keyword(p, a) for p, a in zip(parameters[1:], node.args[1:], strict=False)]
            node.args, node.keywords = node.args[:1], given + node.keywords
            self.changed = True
        return node


TENSOR_METHODS = frozenset({"matmul", "softmax", "log_softmax", "transpose", "masked_fill", "exp", "tril", "triu",
                            "unsqueeze", "view", "reshape", "sqrt", "sin", "cos", "float", "contiguous"})  # fmt: skip
FRESH_CALLS = frozenset({"matmul", "softmax", "log_softmax", "masked_fill", "exp", "sqrt", "sin", "cos"})
ARITHMETIC = {ast.Mult: "mul", ast.Add: "add", ast.Sub: "subtract", ast.Div: "true_divide"}  # subtract and
# true_divide: PyTorch's aliases of sub and div
LOGICAL = {ast.BitAnd: "logical_and", ast.BitOr: "logical_or"}


def tensor_like(node: ast.expr) -> bool:
    """Sure to be a tensor: ``a @ b``, a ``torch`` function's result (``torch.finfo`` aside), or a tensor method's."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return True
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
        return node.func.attr not in ("finfo", "iinfo", "is_tensor")
    return node.func.attr in TENSOR_METHODS and not (isinstance(node.func.value, ast.Name)
                                                     and node.func.value.id in ("self", "F", "nn", "math"))  # fmt: skip


def fresh(node: ast.expr) -> bool:
    """A new tensor (never a view of another): arithmetic on a tensor, ``@``, or a call that makes one."""
    if isinstance(node, ast.BinOp):
        return tensor_like(node.left) or tensor_like(node.right)
    return tensor_like(node) and isinstance(node, ast.Call) and node.func.attr in FRESH_CALLS


class Operators(ast.NodeTransformer):
    def __init__(self) -> None:
        self.changed = False
        self.fresh: set[str] = set()  # names the current function assigned a new tensor

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        outer, self.fresh = self.fresh, set()
        self.generic_visit(node)
        self.fresh = outer
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.stmt:
        target = node.targets[0] if len(node.targets) == 1 else None
        value = node.value
        if (
            isinstance(target, ast.Name)
            and target.id in self.fresh
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "masked_fill"
            and isinstance(value.func.value, ast.Name)
            and value.func.value.id == target.id
        ):
            self.generic_visit(node)
            self.changed = True
            return ast.Expr(ast.Call(ast.Attribute(value.func.value, "masked_fill_", ast.Load()), value.args,
                                     value.keywords))  # fmt: skip
        is_fresh = fresh(value)
        self.generic_visit(node)
        if isinstance(target, ast.Name):
            (self.fresh.add if is_fresh else self.fresh.discard)(target.id)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        left_tensor = tensor_like(node.left)
        both = left_tensor and tensor_like(node.right)
        self.generic_visit(node)
        if type(node.op) in ARITHMETIC and left_tensor:
            self.changed = True
            return torch_call(ARITHMETIC[type(node.op)], [node.left, node.right])
        if type(node.op) in LOGICAL and both:
            self.changed = True
            return torch_call(LOGICAL[type(node.op)], [node.left, node.right])
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Invert):
            self.changed = True
            return ast.Call(ast.Attribute(node.operand, "logical_not", ast.Load()), [], [])
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and len(node.args) == 1:
            if func.value.id == "math" and func.attr == "sqrt" and not node.keywords:
                self.changed = True
                return ast.BinOp(node.args[0], ast.Pow(), ast.Constant(0.5))
        if (
            isinstance(func, ast.Attribute)
            and func.attr.endswith("_")
            and ast.unparse(func.value) in ("nn.init", "torch.nn.init")
        ):
            self.changed = True
            func.attr = func.attr[:-1]
        return node


def own_keywords(tree: ast.Module, course: Parameters) -> bool:
    return rewrote(OwnKeywords(course | defined_parameters(tree)), tree)


def operators(tree: ast.Module) -> bool:
    return rewrote(Operators(), tree)


def disguised(
    code: str, families: tuple[str, ...], added: list[str], course: Parameters | None = None
) -> tuple[str, set[str]]:
    """``code`` with each family of ``families`` applied (helpers it moves appended to ``added``; ``course``: the
    course's callees, for ``own_keywords``) and the families that changed something; unchanged when it does not
    parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, set()
    applied = set()
    for family in sorted(families, key=lambda f: f == "helper"):  # the helper last: it carries the others' changes
        if family == "helper":
            changed = helper(tree, added)
        elif family == "own_keywords":
            changed = own_keywords(tree, course or {})
        else:
            changed = globals()[family](tree)
        if changed:
            applied.add(family)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n", applied
