"""Walking a syntax tree fast: most of what the canonical form costs is visiting nodes."""

import ast


def walk(node: ast.AST) -> list[ast.AST]:
    """The nodes under ``node``, itself first, breadth first (as :func:`ast.walk`), in a list."""
    nodes = [node]
    for current in nodes:  # the list grows as it is read
        nodes += children(current)
    return nodes


def mentions(node: ast.AST, name: str) -> bool:
    """Whether ``name`` is read or written anywhere under ``node``."""
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(node))


def blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """``node``'s non-empty lists of statements: its ``body``, ``orelse`` and ``finalbody``."""
    found = (getattr(node, field, None) for field in ("body", "orelse", "finalbody"))
    return [block for block in found if isinstance(block, list) and block and isinstance(block[0], ast.stmt)]


def children(node: ast.AST) -> list[ast.AST]:
    """:func:`ast.iter_child_nodes` as a list, without the ``ctx`` markers (``Load``, ``Store``).

    Without ``ast``'s two generators per node: walking the tree is most of what the canonical form costs.
    """
    found = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            found += [item for item in value if isinstance(item, ast.AST)]
        elif isinstance(value, ast.AST) and name != "ctx":
            found.append(value)
    return found
