"""A class for the similarity report: independent students, planted copies, untouched and empty notebooks.

Independent students each pick, per exercise, one of the answers the course's tests already
hold (the reference answer and every mutant and alternative of ``tests/variants``, applied
with :meth:`Variant.apply`) or one written for this class in another style (:data:`STYLES`),
at random, so each has a different mix. A planted copy takes one independent student's answers
and disguises them the usual ways (:func:`disguise`): local names renamed, a temporary inlined,
statements swapped where their order is free, comments and blank lines rewritten (by
re-printing the code from its syntax tree, then adding comments and blank lines of its own).
"""

import ast
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from autograder.course.course import Course
from autograder.course.notebooks import fill_answers, grade_id, is_answer_cell, reference_answers
from autograder.course.settings import release_notebook, source_notebook
from tests.support.nbgrader_course import submit
from tests.support.notebooks import read
from tests.variants import VARIANTS

# Answers written for this class, in styles the variants lack: {assignment: {exercise: [answers]}}.
STYLES: dict[str, dict[str, list[str]]] = {
    "01_attention": {
        "sdpa": [
            "def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):\n"
            "    scale = 1.0 / query.shape[-1] ** 0.5\n"
            "    logits = torch.matmul(query * scale, key.transpose(-1, -2))\n"
            "    if mask is not None:\n"
            "        logits = logits.masked_fill(mask == False, torch.finfo(logits.dtype).min)  # noqa: E712\n"
            "    attn = torch.nn.functional.softmax(logits, dim=-1)\n"
            "    attn = attn if dropout is None else dropout(attn)\n"
            "    return torch.matmul(attn, value), attn\n",
        ],
        "causal_mask": [
            "def causal_mask(size, device=None):\n"
            "    return ~torch.triu(torch.ones((size, size), device=device, dtype=torch.bool), diagonal=1)\n",
        ],
        "padding_mask": [
            "def padding_mask(token_ids, pad_idx):\n"
            "    keep = token_ids != pad_idx\n"
            "    return keep[:, None][:, :, None]\n",
        ],
    },
    "02_multi_head_attention": {
        "split_heads": [
            "def split_heads(x, num_heads):\n"
            "    b, l, d = x.shape\n"
            "    if d % num_heads:\n"
            "        raise ValueError(f'{d} is not divisible by {num_heads}')\n"
            "    return x.view(b, l, num_heads, d // num_heads).permute(0, 2, 1, 3)\n",
        ],
        "merge_heads": [
            "def merge_heads(x):\n    b, h, l, dh = x.shape\n    return x.permute(0, 2, 1, 3).reshape(b, l, h * dh)\n",
        ],
    },
}


def answer_pool(assignment: str) -> dict[str, list[str]]:
    """Per exercise, every answer an independent student may hand in: reference, variants, styles."""
    reference = reference_answers(read(source_notebook(assignment)))
    release = read(release_notebook(assignment))
    pool = {grade_id(c): [reference[grade_id(c)]] for c in release.cells if is_answer_cell(c)}
    for variant in VARIANTS.get(assignment, []):
        pool[variant.cell].append(variant.apply(reference[variant.cell]))
    for exercise, answers in STYLES.get(assignment, {}).items():
        pool[exercise] += answers
    return pool


class Renamer(ast.NodeTransformer):
    """Renames the local variables of functions (not parameters, attributes or top-level names)."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node


def local_names(tree: ast.Module) -> set[str]:
    """Names assigned inside functions that are neither parameters nor bound at the top level."""
    top = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    found: set[str] = set()
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        stored = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        found |= stored - parameters
    return found - top


def reads_and_writes(statement: ast.stmt) -> tuple[set[str], set[str]]:
    """The names and attributes (``self.w_q``) a statement reads, and those it writes."""
    nodes = [n for n in ast.walk(statement) if isinstance(n, ast.Name | ast.Attribute)]
    reads = {ast.unparse(n) for n in nodes if isinstance(n.ctx, ast.Load)}
    return reads, {ast.unparse(n) for n in nodes if isinstance(n.ctx, ast.Store)}


def independent(first: ast.stmt, second: ast.stmt) -> bool:
    """Two simple assignments that neither read nor write what the other writes: their order is free."""
    if not all(isinstance(s, ast.Assign | ast.AnnAssign) for s in (first, second)):
        return False
    (read_1, write_1), (read_2, write_2) = reads_and_writes(first), reads_and_writes(second)
    return not (write_1 & (read_2 | write_2) or write_2 & read_1)


def bodies(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for name in ("body", "orelse"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def swap_free_statements(tree: ast.Module) -> int:
    """Swap every other pair of adjacent statements whose order is free; how many pairs were swapped."""
    swapped = 0
    for body in bodies(tree):
        index = 0
        while index + 1 < len(body):
            if independent(body[index], body[index + 1]):
                body[index], body[index + 1] = body[index + 1], body[index]
                swapped += 1
                index += 2
            else:
                index += 1
    return swapped


def inline_temporary(tree: ast.Module) -> bool:
    """Replace the first ``t = expr`` followed by the one statement that reads ``t`` (once) by it on ``expr``."""
    for body in bodies(tree):
        for index in range(len(body) - 1):
            statement, following = body[index], body[index + 1]
            later = body[index + 2 :]
            if (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(following, ast.Assign | ast.Return | ast.Expr)
            ):
                name = statement.targets[0].id
                uses = [n for n in ast.walk(following) if isinstance(n, ast.Name) and n.id == name]
                used_later = any(isinstance(n, ast.Name) and n.id == name for s in later for n in ast.walk(s))
                if len(uses) == 1 and isinstance(uses[0].ctx, ast.Load) and not used_later:
                    body[index + 1] = Inliner(name, statement.value).visit(following)
                    del body[index]
                    return True
    return False


class Inliner(ast.NodeTransformer):
    def __init__(self, name: str, value: ast.expr):
        self.name, self.value = name, value

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.value if node.id == self.name else node


def disguise(code: str, rng: random.Random, inline: bool = False) -> tuple[str, bool]:
    """``code`` as a copier hides it: renamed, reordered, re-printed, other comments and blank lines.

    With ``inline``, one temporary is inlined too; the second value says whether one was.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, False
    Renamer({name: f"{name}_{rng.choice(['tmp', 'val', 'res', 'my'])}" for name in local_names(tree)}).visit(tree)
    inlined = inline and inline_temporary(tree)
    swap_free_statements(tree)
    lines = []
    for line in ast.unparse(ast.fix_missing_locations(tree)).splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        if rng.random() < 0.25:
            lines.append(f"{indent}# {rng.choice(['compute this', 'next step', 'see lecture', 'TODO tidy'])}")
        lines.append(line)
        if rng.random() < 0.2:
            lines.append("")
    return "\n".join(lines) + "\n", inlined


@dataclass
class SimilarityClass:
    """Who handed in what: answers per student, and which pairs are planted copies."""

    assignment: str
    answers: dict[str, dict[str, str]] = field(default_factory=dict)  # student -> {grade id: code}
    added: dict[str, str] = field(default_factory=dict)  # student -> the code cell they added
    copies: set[frozenset[str]] = field(default_factory=set)  # planted pairs
    untouched: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)


def build_class(assignment: str, students: int, copies: int, seed: int = 0) -> SimilarityClass:
    """``students`` independent students, ``copies`` of them copied, two untouched and two empty notebooks."""
    rng = random.Random(f"{assignment}-{seed}")
    pool = answer_pool(assignment)
    made = SimilarityClass(assignment)
    for index in range(students):
        made.answers[f"s{index:03d}"] = {exercise: rng.choice(options) for exercise, options in pool.items()}
    for index, original in enumerate(rng.sample(sorted(made.answers), copies)):
        copier, to_inline = f"c{index:02d}", True  # one temporary inlined, in the first exercise that has one
        made.answers[copier] = {}
        for exercise, code in made.answers[original].items():
            made.answers[copier][exercise], inlined = disguise(code, rng, inline=to_inline)
            to_inline = to_inline and not inlined
        made.copies.add(frozenset({original, copier}))
    made.untouched = ["untouched1", "untouched2"]
    made.empty = ["empty1", "empty2"]
    for student in made.untouched:
        made.answers[student] = {}
    for student in made.empty:
        made.answers[student] = dict.fromkeys(pool, "")
    return made


def notebook_of(made: SimilarityClass, student: str, release: NotebookNode) -> NotebookNode:
    notebook = fill_answers(release, made.answers[student])
    if student in made.added:
        cell = new_code_cell(made.added[student])
        del cell["id"]
        notebook.cells.append(cell)
    return notebook


def hand_in(course: Course, made: SimilarityClass) -> None:
    """Every student's notebook, where ``collect`` puts it in ``course``."""
    release = nbformat.read(release_notebook(made.assignment), as_version=4)
    for student in made.answers:
        submit(course, made.assignment, student, notebook_of(made, student, release))
