"""A list built by a loop and the same list built by a comprehension, read as one.

``out = []`` then ``for t in items: out.append(e)`` builds what ``out = [e for t in items]`` builds (the
cases: docs/similarity.md, "What is compared", *a loop that builds a list reads as the comprehension*).
The loop's body must be a chain of ``for`` and ``if`` statements, each holding only the next, ending in the
one ``append`` (or ``d[k] = v``); statements between the two may neither read nor write the list's name.
"""

import ast

from autograder.similarity.trees import blocks, mentions, walk


def clauses(loop: ast.stmt, name: str) -> tuple[list[ast.comprehension], ast.stmt] | None:
    """The comprehension clauses of a loop nest and its innermost statement; None if it is not one chain."""
    found: list[ast.comprehension] = []
    node = loop
    while True:
        if isinstance(node, ast.For) and not node.orelse and len(node.body) == 1:
            found.append(ast.comprehension(node.target, node.iter, [], 0))
            node = node.body[0]
        elif isinstance(node, ast.If) and found and not node.orelse and len(node.body) == 1:
            found[-1].ifs.append(node.test)
            node = node.body[0]
        else:
            break
    if not found or any(mentions(c, name) for c in found):
        return None
    return found, node


def element(statement: ast.stmt, name: str, kind: type) -> ast.expr | tuple[ast.expr, ast.expr] | None:
    """``name.append(e)``'s ``e`` (a list), or ``name[k] = v``'s ``(k, v)`` (a dict); None for anything else."""
    if kind is ast.List and isinstance(statement, ast.Expr) and isinstance(call := statement.value, ast.Call):
        func = call.func
        if (isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name)
                and func.value.id == name and len(call.args) == 1 and not call.keywords):
            value = call.args[0]
            return None if mentions(value, name) else value
    if kind is ast.Dict and isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
            if not (mentions(target.slice, name) or mentions(statement.value, name)):
                return target.slice, statement.value
    return None


def empty(statement: ast.stmt) -> tuple[str, type] | None:
    """``name = []`` (or ``list()``) and ``name = {}`` (or ``dict()``): the name and the kind built."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0],
                                                                                              ast.Name)):
        return None
    value, name = statement.value, statement.targets[0].id
    if isinstance(value, ast.List) and not value.elts:
        return name, ast.List
    if isinstance(value, ast.Dict) and not value.keys:
        return name, ast.Dict
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.args and not value.keywords:
        return {"list": (name, ast.List), "dict": (name, ast.Dict)}.get(value.func.id)
    return None


def fold_loops(block: list[ast.stmt]) -> None:
    """Each ``name = []`` and the loop that fills it, in ``block``, as one comprehension (in place)."""
    index = 0
    while index < len(block):
        made = empty(block[index])
        if made is not None:
            name, kind = made
            later = index + 1
            while later < len(block) and not mentions(block[later], name):
                later += 1
            nest = clauses(block[later], name) if later < len(block) else None
            value = element(nest[1], name, kind) if nest else None
            if value is not None:
                generators = nest[0]
                comprehension = (ast.ListComp(value, generators) if kind is ast.List
                                 else ast.DictComp(value[0], value[1], generators))
                block[index] = ast.Assign([ast.Name(name, ast.Store())], comprehension)
                del block[later]
        index += 1


class Comprehensions(ast.NodeTransformer):
    """Generator expressions as list comprehensions, ``list(comprehension)`` as the comprehension."""

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.ListComp:
        self.generic_visit(node)
        return ast.ListComp(node.elt, node.generators)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if (isinstance(node.func, ast.Name) and node.func.id == "list" and len(node.args) == 1
                and not node.keywords and isinstance(node.args[0], ast.ListComp)):
            return node.args[0]
        return node


def comprehensions(tree: ast.Module) -> ast.Module:
    """``tree`` with its loops that build a list or dict, and its generator expressions, as comprehensions."""
    for node in walk(tree):
        for block in blocks(node):
            fold_loops(block)
    return Comprehensions().visit(tree)
