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
  function made, ``nn.init.f_`` as its older name ``nn.init.f``;
- ``static_method``: a function's body moved into a static method of a class of the answer's, called
  as ``_<Name>Ops.run(...)``;
- ``call_method``: the same into a class's ``__call__``, called through an instance (``_<name>_call(...)``);
- ``comprehension``: a loop that appends to a list as a comprehension, a comprehension as that loop (one
  inside a statement as a loop that fills a list first);
- ``wrappers``: each function's body in ``try`` with a fallback that logs and raises again, a logger's
  ``debug`` call after each computed assignment, a returned tensor wrapped in ``.clone()``;
- ``algebra``: ``a * b`` as ``b * a`` (and ``+`` where a side is surely a number or a tensor), ``2 * (a + b)``
  as ``2 * a + 2 * b``, ``F.cross_entropy`` as ``F.nll_loss`` of ``F.log_softmax``, ``torch.zeros(s, dtype=d,
  device=t.device)`` as ``t.new_zeros(s, dtype=d)``, ``torch.zeros_like(t)`` as ``t.new_zeros(t.shape)`` and
  ``x[:, 0]`` as ``x.select(1, 0)``.
"""

import ast
import functools
import importlib
import inspect

from autograder.course.settings import release_notebook
from autograder.similarity.answers import release_code
from testbed.notebooks import read

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
    "static_method",
    "call_method",
    "comprehension",
    "wrappers",
    "algebra",
)
# The hand-built class's hardest copy combined all of the last five (a class's moves, loops, wrappers, algebra).
COMBINED = ("static_method", "comprehension", "wrappers", "algebra")
TRIPLES = (("synonyms", "keywords", "dead_code"), ("annotations", "asserts", "helper"),
           ("helper", "temporary", "synonyms"), ("annotations", "asserts", "own_keywords"),
           ("operators", "own_keywords", "temporary"), ("call_method", "comprehension", "algebra"),
           COMBINED)
# Parameter names of library calls a student spells either way (positional <-> keyword).
PARAMETERS = {
    "softmax": ("dim",), "log_softmax": ("dim",), "transpose": ("dim0", "dim1"), "masked_fill": ("mask", "value"),
    "cat": ("tensors", "dim"), "stack": ("tensors", "dim"), "Linear": ("in_features", "out_features"),
    "Embedding": ("num_embeddings", "embedding_dim"), "Dropout": ("p",), "LayerNorm": ("normalized_shape",),
    "unsqueeze": ("dim",), "tril": ("diagonal",), "triu": ("diagonal",),
}
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
                                node.keywords)
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
                                        and receiver.id in ("torch", "F", "self", "nn")):
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
                                    type_params=[])
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
                     if not line.lstrip().startswith(("%", "!")))
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
                            "unsqueeze", "view", "reshape", "sqrt", "sin", "cos", "float", "contiguous"})
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
                                                     and node.func.value.id in ("self", "F", "nn", "math"))


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
                                     value.keywords))
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



def cell_level(tree: ast.Module, function: ast.FunctionDef) -> int:
    """The index of the top-level statement that holds ``function`` (itself, or its class)."""
    return next(i for i, s in enumerate(tree.body) if any(n is function for n in ast.walk(s)))


def move_to_class(tree: ast.Module, call_method: bool) -> bool:
    """The first movable function's body moved into a class of the answer's: ``_<Name>Ops.run``, a static method,
    or the ``__call__`` of ``_<Name>Call``, called through an instance ``_<name>_call`` (``call_method``)."""
    for function in outer_functions(tree):
        if movable(function):
            parameters = [a.arg for a in function.args.args]
            title = function.name.title().replace("_", "")
            if call_method:
                signature = [ast.arg("impl"), *(ast.arg(p) for p in parameters)]
                method = ast.FunctionDef("__call__", ast.arguments([], signature, None, [], [], None, []),
                                         function.body, [], None, type_params=[])
                instance = f"_{function.name}_call"
                made = [ast.ClassDef(f"_{title}Call", [], [], [method], [], type_params=[]),
                        ast.Assign([ast.Name(instance, ast.Store())], ast.Call(name(f"_{title}Call"), [], []))]
                callee: ast.expr = name(instance)
            else:
                signature = [ast.arg(p) for p in parameters]
                method = ast.FunctionDef("run", ast.arguments([], signature, None, [], [], None, []), function.body,
                                         [name("staticmethod")], None, type_params=[])
                made = [ast.ClassDef(f"_{title}Ops", [], [], [method], [], type_params=[])]
                callee = ast.Attribute(name(f"_{title}Ops"), "run", ast.Load())
            tree.body[cell_level(tree, function) : cell_level(tree, function)] = made
            function.body = [ast.Return(ast.Call(callee, [name(p) for p in parameters], []))]
            return True
    return False


def static_method(tree: ast.Module) -> bool:
    return move_to_class(tree, call_method=False)


def call_method(tree: ast.Module) -> bool:
    return move_to_class(tree, call_method=True)


def target_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def as_loop(name_: str, comprehension: ast.ListComp) -> list[ast.stmt]:
    """``name_ = []`` and the loop nest that appends what ``comprehension`` holds."""
    inner: ast.stmt = ast.Expr(ast.Call(ast.Attribute(name(name_), "append", ast.Load()), [comprehension.elt], []))
    for generator in reversed(comprehension.generators):
        for test in reversed(generator.ifs):
            inner = ast.If(test, [inner], [])
        inner = ast.For(generator.target, generator.iter, [inner], [])
    return [ast.Assign([ast.Name(name_, ast.Store())], ast.List([], ast.Load())), inner]


def loop_comprehension(block: list[ast.stmt], index: int) -> bool:
    """``out = []`` and the loop that appends to it, at ``block[index]``, as one ``out = [...]``."""
    first = block[index]
    if index + 1 >= len(block) or not (isinstance(first, ast.Assign) and len(first.targets) == 1
                                       and isinstance(first.targets[0], ast.Name) and isinstance(first.value, ast.List)
                                       and not first.value.elts):
        return False
    list_name, loop = first.targets[0].id, block[index + 1]
    generators = []
    while isinstance(loop, ast.For) and not loop.orelse and len(loop.body) == 1:
        generators.append(ast.comprehension(loop.target, loop.iter, [], 0))
        loop = loop.body[0]
        while isinstance(loop, ast.If) and not loop.orelse and len(loop.body) == 1:
            generators[-1].ifs.append(loop.test)
            loop = loop.body[0]
    call = loop.value if isinstance(loop, ast.Expr) else None
    if not (generators and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append" and ast.unparse(call.func.value) == list_name and len(call.args) == 1):
        return False
    block[index : index + 2] = [ast.Assign(first.targets, ast.ListComp(call.args[0], generators))]
    return True


def comprehension(tree: ast.Module) -> bool:
    """Loops that build a list as comprehensions, and comprehensions as loops: ``out = [e for ...]`` inside a
    function as the loop, and a comprehension inside a statement as a loop that fills ``<function>_items<k>`` first
    (when its loop names are not the function's other names)."""
    changed = False
    for function in functions(tree):
        for node in list(ast.walk(function)):
            for block in (getattr(node, f, None) for f in ("body", "orelse")):
                if not (isinstance(block, list) and block and isinstance(block[0], ast.stmt)):
                    continue
                index = 0
                while index < len(block):
                    if loop_comprehension(block, index):
                        changed = True
                    elif hoisted := hoist(block[index], function, f"{function.name}_items{index}"):
                        block[index:index] = hoisted
                        index += len(hoisted)
                        changed = True
                    index += 1
    return changed


def hoist(statement: ast.stmt, function: ast.FunctionDef, items: str) -> list[ast.stmt]:
    """The loop that builds, in ``items``, the first comprehension ``statement`` evaluates for sure (not under
    ``and``, ``or``, ``x if c else y``, a lambda or another comprehension), which then reads ``items``; [] when
    there is none."""
    if not isinstance(statement, ast.Assign | ast.Return | ast.Expr) or statement.value is None:
        return []
    pending = [statement.value]
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            loop_names = set().union(*(target_names(g.target) for g in node.generators))
            inside = {id(n) for n in ast.walk(node)}
            others = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and id(n) not in inside}
            if loop_names & others:
                return []
            replace(statement, node, name(items))
            return as_loop(items, ast.ListComp(node.elt, node.generators))
        if not isinstance(node, ast.IfExp | ast.BoolOp | ast.Lambda | ast.SetComp | ast.DictComp):
            pending += list(ast.iter_child_nodes(node))
    return []


def replace(root: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for node in ast.walk(root):
        for field, value in ast.iter_fields(node):
            if value is old:
                setattr(node, field, new)
            elif isinstance(value, list):
                value[:] = [new if item is old else item for item in value]


LOGGER = "logger"


def wrappers(tree: ast.Module) -> bool:
    """Each function's body in ``try`` with a fallback that logs and raises again, a ``logger.debug`` after each
    computed assignment, a returned tensor wrapped in ``.clone()`` (the first of a returned tuple in
    ``.contiguous()``); the logger made at the top of the cell."""
    changed = False
    for function in outer_functions(tree):
        for statement in list(ast.walk(function)):
            if isinstance(statement, ast.Return) and statement.value is not None:
                value = statement.value
                if tensor_like(value):
                    statement.value = ast.Call(ast.Attribute(value, "clone", ast.Load()), [], [])
                elif isinstance(value, ast.Tuple) and value.elts and tensor_like(value.elts[0]):
                    value.elts[0] = ast.Call(ast.Attribute(value.elts[0], "contiguous", ast.Load()), [], [])
        body = []
        for statement in function.body:
            body.append(statement)
            if target := computed(statement):
                message = [ast.Constant(f"{function.name}: %s computed"), ast.Constant(target)]
                body.append(ast.Expr(ast.Call(ast.Attribute(name(LOGGER), "debug", ast.Load()), message, [])))
        warn = ast.Expr(ast.Call(ast.Attribute(name(LOGGER), "warning", ast.Load()),
                                 [ast.Constant(f"{function.name} failed, see above")], []))
        handler = ast.ExceptHandler(name("RuntimeError"), None, [warn, ast.Raise()])
        function.body = [ast.Try(body, [handler], [], [])]
        changed = True
    if changed:
        tree.body[:0] = ast.parse(f"import logging\n{LOGGER} = logging.getLogger(__name__)\n").body
    return changed


POWERS_OF_TWO = (2, 4, 8)  # a product by one is exact in floating point: distributing it changes no bit
MAKERS = ("zeros", "ones", "empty", "full")


def commutable(node: ast.expr) -> bool:
    """Sure to be a number or a tensor (``+`` and ``*`` commute there): no list, tuple, string or slice inside."""
    barred = ast.List | ast.Tuple | ast.ListComp | ast.JoinedStr | ast.Slice | ast.Dict | ast.Set
    return not any(isinstance(n, barred) or isinstance(n, ast.Constant) and isinstance(n.value, str)
                   for n in ast.walk(node))


class Algebra(ast.NodeTransformer):
    """``a * b`` as ``b * a``, ``a + b`` as ``b + a``; ``2 * (a + b)`` as ``2 * a + 2 * b`` (a power of two: exact);
    ``F.cross_entropy(x, y)`` as ``F.nll_loss(F.log_softmax(x, dim=1), y)``; ``torch.zeros(s, dtype=d,
    device=t.device)`` as ``t.new_zeros(s, dtype=d)`` and ``torch.zeros_like(t)`` as ``t.new_zeros(t.shape)``;
    ``x[:, 0]`` and ``x[..., 0]`` (a constant index) as ``x.select(1, 0)`` and ``x.select(-1, 0)``."""

    def __init__(self) -> None:
        self.changed = False

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        sure = isinstance(node.op, ast.Mult) or any(tensor_like(s) or number(s) for s in (node.left, node.right))
        if not (isinstance(node.op, ast.Mult | ast.Add) and commutable(node) and sure):  # ``+`` of lists: no
            return node
        self.changed = True
        factor, other = (node.left, node.right) if isinstance(node.left, ast.Constant) else (node.right, node.left)
        if (isinstance(node.op, ast.Mult) and isinstance(factor, ast.Constant) and factor.value in POWERS_OF_TWO
                and isinstance(other, ast.BinOp) and isinstance(other.op, ast.Add | ast.Sub)):
            return ast.BinOp(ast.BinOp(factor, ast.Mult(), other.left), other.op,
                             ast.BinOp(factor, ast.Mult(), other.right))
        return ast.BinOp(node.right, node.op, node.left)

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not isinstance(node.ctx, ast.Load) or len(parts) < 2 or minus(parts[-1]) is None:
            return node
        if all(isinstance(p, ast.Slice) and p.lower is p.upper is p.step is None for p in parts[:-1]):
            dimension = len(parts) - 1
        elif len(parts) == 2 and isinstance(parts[0], ast.Constant) and parts[0].value is Ellipsis:
            dimension = -1
        else:
            return node
        self.changed = True
        return ast.Call(ast.Attribute(node.value, "select", ast.Load()), [*constants(dimension), parts[-1]], [])

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        called = ast.unparse(node.func)
        if called in ("F.cross_entropy", "torch.nn.functional.cross_entropy") and len(node.args) >= 2:
            self.changed = True
            log_softmax = ast.Call(ast.Attribute(name("F"), "log_softmax", ast.Load()), [node.args[0]],
                                   [ast.keyword("dim", ast.Constant(1))])
            return ast.Call(ast.Attribute(name("F"), "nll_loss", ast.Load()), [log_softmax, *node.args[1:]],
                            node.keywords)
        kind = called.removeprefix("torch.")
        device = next((k.value for k in node.keywords if k.arg == "device"), None)
        if (kind in MAKERS and node.args and isinstance(device, ast.Attribute) and device.attr == "device"
                and any(k.arg == "dtype" for k in node.keywords)):
            self.changed = True
            rest = [k for k in node.keywords if k.arg != "device"]
            return ast.Call(ast.Attribute(device.value, f"new_{kind}", ast.Load()), node.args, rest)
        made = kind.removesuffix("_like")
        if made != kind and made in MAKERS and len(node.args) == 1 and not node.keywords:
            self.changed = True
            source = node.args[0]
            return ast.Call(ast.Attribute(source, f"new_{made}", ast.Load()), [ast.Attribute(source, "shape",
                            ast.Load())], [])
        return node


def number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float)


def constants(*values: int) -> list[ast.expr]:
    return [ast.Constant(v) if v >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-v)) for v in values]


def algebra(tree: ast.Module) -> bool:
    return rewrote(Algebra(), tree)
