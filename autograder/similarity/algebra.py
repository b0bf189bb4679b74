"""Arithmetic in one form: a polynomial expanded, its terms and factors in one order.

``4 * d * (d + 1)``, ``4 * d * d + 4 * d`` and ``4 * d ** 2 + d * 4`` are one sum of monomials,
``4 * d ** 2 + 4 * d``. Each maximal expression of ``+``, ``-``, ``*``, ``/``, unary minus and
powers by a constant is expanded (a sum raised to a small whole power too) into a sum of products of
*atoms* (anything else: a name, a call, ``a @ b``, ``a // b``) with numeric coefficients; a
division by an atom is that atom to the power -1. Atoms are ordered by ``key`` of their text (names
numbered away), then by the terms they stand in, then by where their names first occur in the
function (a renamed or reordered ``x * d`` keeps its order), then by where they appear; the terms by
their atoms. Both ``+`` and ``*`` commute on numbers and on tensors (element-wise, broadcast), which
is all this assumes; an expression with an atom that is a list, tuple, string or slice
(``x.shape[:-1] + (h, d)``, ``[0] * n``: where ``+`` and ``*`` are not those) is left as it is.
"""

import ast
import math
from collections.abc import Callable
from fractions import Fraction

from autograder.similarity.trees import children, walk

Monomial = tuple[tuple[str, Fraction], ...]  # (atom's text, power), sorted by the atom's text
Polynomial = dict[Monomial, Fraction]
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)
NOT_NUMBERS = (ast.List, ast.Tuple, ast.ListComp, ast.JoinedStr, ast.Set, ast.Dict, ast.SetComp, ast.DictComp,
               ast.GeneratorExp)
MAX_POWER = 3  # a sum (or a number other than 1) raised to a whole power up to this is expanded; above, kept as is
MAX_TERMS = 64  # an expansion with more terms is left as written (a hostile answer could ask for millions)


class NotArithmetic(Exception):
    """The expression holds something ``+`` or ``*`` may not commute on."""


def arithmetic(node: ast.expr) -> bool:
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ARITHMETIC) or (isinstance(node.op, ast.Pow) and number(node.right) is not None)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd)


def number(node: ast.expr) -> Fraction | None:
    """A numeric constant (``-1`` included) as a fraction; None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return Fraction(node.value) if math.isfinite(node.value) else None
    return None


def numeric(node: ast.expr) -> bool:
    """Whether ``node`` may be a number or a tensor: not a list, tuple, string, or a slice of one axis
    (``x.shape[:-1]``)."""
    if isinstance(node, NOT_NUMBERS) or isinstance(node, ast.Constant) and isinstance(node.value, str):
        return False
    if isinstance(node, ast.Subscript):  # a tuple index (``x[..., 0::2]``, ``x[:, 1:]``) is a tensor's, not a list's
        return isinstance(node.slice, ast.Tuple) or not isinstance(node.slice, ast.Slice)
    return True


class Builder:
    """Reads an arithmetic expression as a :data:`Polynomial`, keeping each atom's node and first place."""

    def __init__(self, key: Callable[[str], str], ranks: dict[str, int]) -> None:
        self.atoms: dict[str, tuple[int, ast.expr]] = {}
        self.key, self.ranks = key, ranks  # what orders atoms when printing (see printed)

    def atom(self, node: ast.expr) -> Polynomial:
        if not numeric(node):
            raise NotArithmetic
        text = ast.unparse(node)
        self.atoms.setdefault(text, (len(self.atoms), node))
        return {((text, Fraction(1)),): Fraction(1)}

    def read(self, node: ast.expr) -> Polynomial:
        if (value := number(node)) is not None:
            return {(): value} if value else {}
        if not arithmetic(node):
            return self.atom(node)
        if isinstance(node, ast.UnaryOp):
            inner = self.read(node.operand)
            return scale(inner, Fraction(-1)) if isinstance(node.op, ast.USub) else inner
        if isinstance(node.op, ast.Pow):
            return self.power(node)
        left, right = self.read(node.left), self.read(node.right)
        if isinstance(node.op, ast.Add):
            return add(left, right)
        if isinstance(node.op, ast.Sub):
            return add(left, scale(right, Fraction(-1)))
        if isinstance(node.op, ast.Mult):
            return multiply(left, right)
        inverse = invert(right)
        return multiply(left, inverse) if inverse is not None else multiply(left, self.atom_power(node.right, -1))

    def power(self, node: ast.BinOp) -> Polynomial:
        exponent = number(node.right)
        base = self.read(node.left)
        if len(base) == 1:
            ((monomial, coefficient),) = base.items()
            if coefficient == 1 or exponent.denominator == 1 and abs(exponent) <= MAX_POWER:
                return {raise_to(monomial, exponent): coefficient ** int(exponent) if exponent.denominator == 1
                        else coefficient}
        if exponent.denominator == 1 and 0 <= exponent <= MAX_POWER:
            found: Polynomial = {(): Fraction(1)}
            for _ in range(int(exponent)):
                found = multiply(found, base)
            return found
        return self.atom_power(printed(base, self), exponent)  # a sum to another power: its terms in order

    def atom_power(self, node: ast.expr, exponent: Fraction | int) -> Polynomial:
        ((monomial, _),) = self.atom(node).items()
        return {raise_to(monomial, Fraction(exponent)): Fraction(1)}


def raise_to(monomial: Monomial, exponent: Fraction) -> Monomial:
    return tuple((atom, power * exponent) for atom, power in monomial)


def scale(polynomial: Polynomial, factor: Fraction) -> Polynomial:
    return {monomial: coefficient * factor for monomial, coefficient in polynomial.items()}


def add(first: Polynomial, second: Polynomial) -> Polynomial:
    found = dict(first)
    for monomial, coefficient in second.items():
        found[monomial] = found.get(monomial, Fraction(0)) + coefficient
    return {monomial: coefficient for monomial, coefficient in found.items() if coefficient}


def multiply(first: Polynomial, second: Polynomial) -> Polynomial:
    found: Polynomial = {}
    for one, a in first.items():
        for other, b in second.items():
            powers: dict[str, Fraction] = dict(one)
            for atom, power in other:
                powers[atom] = powers.get(atom, Fraction(0)) + power
            monomial = tuple(sorted((atom, power) for atom, power in powers.items() if power))
            found = add(found, {monomial: a * b})
    if len(found) > MAX_TERMS:
        raise NotArithmetic
    return found


def invert(polynomial: Polynomial) -> Polynomial | None:
    """1 / ``polynomial`` when it is one monomial (its powers negated); None for a sum."""
    if len(polynomial) != 1:
        return None
    ((monomial, coefficient),) = polynomial.items()
    return {raise_to(monomial, Fraction(-1)): 1 / coefficient}


def constant(value: Fraction) -> ast.expr:
    plain = int(value) if value.denominator == 1 else float(value)
    return ast.Constant(plain)


def printed(polynomial: Polynomial, builder: Builder) -> ast.expr:
    """The polynomial as an expression: terms and factors in one order, negative powers as a division (the
    builder's ``ranks``: where each name of the function first occurs)."""
    ranks = builder.ranks
    atoms = {
        text: (builder.key(text), role(text, polynomial),
               [ranks.get(n.id, -1) for n in walk(node) if isinstance(n, ast.Name)], place)
        for text, (place, node) in builder.atoms.items()
    }

    def order(monomial: Monomial) -> tuple:
        return tuple((atoms[atom], -power) for atom, power in sorted(monomial, key=lambda item: atoms[item[0]]))

    expression: ast.expr | None = None
    for monomial in sorted(polynomial, key=order):
        coefficient = polynomial[monomial]
        term = product(monomial, abs(coefficient), builder, atoms)
        if expression is None:
            expression = ast.UnaryOp(ast.USub(), term) if coefficient < 0 else term
        else:
            expression = ast.BinOp(expression, ast.Sub() if coefficient < 0 else ast.Add(), term)
    return expression if expression is not None else ast.Constant(0)


def role(atom: str, polynomial: Polynomial) -> list[tuple[Fraction, int, Fraction]]:
    """Where ``atom`` stands in ``polynomial`` (its power, its term's length and coefficient, per term): what
    orders atoms of one text after renaming (``x`` and ``d``) whichever was written first."""
    return sorted(
        (power, len(monomial), polynomial[monomial])
        for monomial in polynomial
        for name, power in monomial
        if name == atom
    )


def product(monomial: Monomial, coefficient: Fraction, builder: Builder, atoms: dict[str, tuple]) -> ast.expr:
    """``c * a * b ** 2 / d``: the coefficient (unless 1), the positive powers, then a division by the others."""
    factors = sorted(monomial, key=lambda item: atoms[item[0]])

    def power(atom: str, exponent: Fraction) -> ast.expr:
        node = builder.atoms[atom][1]
        return node if exponent == 1 else ast.BinOp(node, ast.Pow(), constant(exponent))

    up = [power(atom, exponent) for atom, exponent in factors if exponent > 0]
    down = [power(atom, -exponent) for atom, exponent in factors if exponent < 0]
    if coefficient != 1 or not up:
        up.insert(0, constant(coefficient))
    expression = up[0]
    for factor in up[1:]:
        expression = ast.BinOp(expression, ast.Mult(), factor)
    for factor in down:
        expression = ast.BinOp(expression, ast.Div(), factor)
    return expression


class Algebra(ast.NodeTransformer):
    """Each maximal arithmetic expression in its polynomial form (see the module)."""

    def __init__(self, key: Callable[[str], str]):
        self.key = key
        self.ranks: dict[str, int] = {}  # the current function's names, by where they first occur

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        outer = self.ranks
        self.ranks = {}
        for found in walk_in_order(node):
            self.ranks.setdefault(found, len(self.ranks))
        self.generic_visit(node)
        self.ranks = outer
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        return self.normal(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        return self.normal(node)

    def normal(self, node: ast.expr) -> ast.expr:
        if not arithmetic(node):
            self.generic_visit(node)
            return node
        for child in atoms_of(node):  # the atoms first, in their own form
            self.generic_visit(child)
        builder = Builder(self.key, self.ranks)
        try:
            polynomial = builder.read(node)
        except NotArithmetic:
            return node
        return printed(polynomial, builder)


def walk_in_order(function: ast.FunctionDef) -> list[str]:
    """The names of ``function``, its parameters first, then as its code reads them (depth first, in order)."""
    found = [a.arg for a in function.args.args]
    pending: list[ast.AST] = list(reversed(function.body))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name):
            found.append(node.id)
        pending += reversed(children(node))
    return found


def atoms_of(node: ast.expr) -> list[ast.expr]:
    """The sub-expressions of an arithmetic expression that are not arithmetic (what the atoms hold)."""
    found, pending = [], [node]
    while pending:
        current = pending.pop()
        if arithmetic(current):
            pending += [current.left, current.right] if isinstance(current, ast.BinOp) else [current.operand]
        else:
            found.append(current)
    return found


def normal_arithmetic(tree: ast.AST, key: Callable[[str], str]) -> ast.AST:
    """``tree`` with its arithmetic in polynomial form, ``key`` ordering the atoms by their text."""
    return Algebra(key).visit(tree)
