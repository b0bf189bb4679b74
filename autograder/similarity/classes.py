"""Helper classes that only hold functions, read as those functions (which :mod:`.canonical` then inlines).

A copier moves an answer's body into a class of their own (docs/similarity.md, "What is compared", *helper
classes read as functions*). A class with no base and no state computes nothing a function would not: each
method reads as the top-level function ``Helper__run`` (``Helper____call__``), its unused first parameter
dropped, and each call of it as that function's call. A class whose methods read ``self`` is left alone.
"""

import ast
from collections.abc import Iterable

from autograder.similarity.trees import mentions


def method_name(cls: str, method: str) -> str:
    return f"{cls}__{method}"


def stateless(cls: ast.ClassDef) -> dict[str, ast.FunctionDef] | None:
    """The class's methods as functions (first parameter dropped unless static); None when it is not such a class."""
    if cls.bases or cls.keywords or cls.decorator_list:
        return None
    functions = {}
    for node in cls.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        if not isinstance(node, ast.FunctionDef) or node.name == "__init__":
            return None
        static = [d for d in node.decorator_list if isinstance(d, ast.Name) and d.id == "staticmethod"]
        if len(static) != len(node.decorator_list):
            return None
        function = ast.FunctionDef(method_name(cls.name, node.name), node.args, node.body, [], None,
                                   type_params=[])
        if not static:
            if not node.args.args:
                return None
            first = node.args.args[0].arg
            if mentions(node, first):
                return None
            arguments = node.args
            defaults = arguments.defaults[1:] if len(arguments.defaults) == len(arguments.args) else arguments.defaults
            function.args = ast.arguments(arguments.posonlyargs, arguments.args[1:], arguments.vararg,
                                          arguments.kwonlyargs, arguments.kw_defaults, arguments.kwarg, defaults)
        function.flattened_from = (cls.name, node.name)  # read by known_classes, from the added cells' helpers
        functions[node.name] = function
    return functions or None


class Calls(ast.NodeTransformer):
    """``C.m(...)``, ``C().m(...)``, ``C()(...)`` and ``instance(...)`` as calls of the flattened functions."""

    def __init__(self, methods: dict[str, set[str]], instances: dict[str, str]):
        self.methods = methods  # class -> its methods
        self.instances = instances  # a top-level name bound to ``C()`` -> C

    def owner(self, node: ast.expr) -> str | None:
        """The class ``node`` stands for: ``C``, ``C()`` or an instance's name."""
        if isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(node.func, ast.Name):
            return node.func.id if node.func.id in self.methods else None
        if isinstance(node, ast.Name):
            return node.id if node.id in self.methods else self.instances.get(node.id)
        return None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and (cls := self.owner(func.value)) and func.attr in self.methods[cls]:
            node.func = ast.Name(method_name(cls, func.attr), ast.Load())
        elif (
            not isinstance(func, ast.Name) or func.id not in self.methods
        ) and (cls := self.owner(func)) and "__call__" in self.methods[cls]:
            node.func = ast.Name(method_name(cls, "__call__"), ast.Load())
        return node


def flatten_classes(tree: ast.Module, known: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Each stateless top-level class of ``tree`` replaced by its methods as functions, and every call of them
    (and of ``known`` classes flattened elsewhere: the added cells') rewritten, in place; the classes flattened."""
    methods = dict(known or {})
    body: list[ast.stmt] = []
    for statement in tree.body:
        functions = stateless(statement) if isinstance(statement, ast.ClassDef) else None
        if functions is None:
            body.append(statement)
            continue
        methods[statement.name] = set(functions)
        body += functions.values()
    if not methods:
        return {}
    instances = {
        s.targets[0].id: s.value.func.id
        for s in body
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) and s.value.func.id in methods
        and not s.value.args and not s.value.keywords
    }
    body = [s for s in body if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                                    and getattr(s.targets[0], "id", None) in instances)]
    tree.body[:] = [Calls(methods, instances).visit(s) for s in body] or [ast.Pass()]
    return {name: found for name, found in methods.items() if name not in (known or {})}


def known_classes(functions: Iterable[ast.FunctionDef]) -> dict[str, set[str]]:
    """The classes that ``functions`` (helpers of another cell) were flattened from, and their methods."""
    found: dict[str, set[str]] = {}
    for function in functions:
        if origin := getattr(function, "flattened_from", None):
            found.setdefault(origin[0], set()).add(origin[1])
    return found
