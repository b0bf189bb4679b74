"""A class for the similarity report: independent students, planted copies, untouched and empty notebooks.

Independent students each pick, per exercise, one of the answers the course's tests already
hold (the reference answer and every mutant and alternative of ``testbed/variants``, applied
with :meth:`Variant.apply`) or one written for this class in another style
(:mod:`testbed.similarity_styles`), at random, no two students the same mix. A planted
copy takes one independent student's answers and disguises them the usual ways
(:func:`disguise`): local names renamed, a helper function inlined,
statements swapped where their order is free, comments and blank lines rewritten (by
re-printing the code from its syntax tree, then adding comments and blank lines of its own).
"""

import ast
import copy
import functools
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from autograder.course.course import Course
from autograder.course.notebooks import fill_answers, grade_id, is_answer_cell, reference_answers
from autograder.course.settings import release_notebook, source_notebook
from autograder.pipeline.storage.results import Status, SubmissionResult, TestResult, save_result
from autograder.similarity.fingerprints import fingerprint
from testbed.nbgrader_course import submit
from testbed.notebooks import read
from testbed.similarity_disguises import FAMILIES, TRIPLES, course_parameters, disguised
from testbed.similarity_styles import STYLES
from testbed.variants import VARIANTS


@functools.cache
def answer_pool(assignment: str) -> dict[str, list[str]]:
    """Per exercise, every answer an independent student may hand in: reference, variants, styles.

    Answers that differ only in what normalising drops (a mutant that reads ``value.size(-1)``
    where the reference reads ``query.size(-1)``: names are numbered away) have the same
    fingerprints: no detector that sees through renaming can tell them apart, so they are one
    answer here, the first kept (so are an answer with a helper and its inlined twin, which the
    structural normalisation makes one). Made once per assignment; read-only.
    """
    reference = reference_answers(read(source_notebook(assignment)))
    release = read(release_notebook(assignment))
    pool = {grade_id(c): [reference[grade_id(c)]] for c in release.cells if is_answer_cell(c)}
    for variant in VARIANTS.get(assignment, []):
        pool[variant.cell].append(variant.apply(reference[variant.cell]))
    for exercise, answers in STYLES.get(assignment, {}).items():
        pool[exercise] += answers
    return {exercise: distinct(answers) for exercise, answers in pool.items()}


def distinct(answers: list[str]) -> list[str]:
    """``answers`` without those whose fingerprints an earlier one already has."""
    seen: set[frozenset[int]] = set()
    kept = []
    for answer in answers:
        hashes = frozenset(fingerprint(answer).hashes)
        if hashes not in seen:
            seen.add(hashes)
            kept.append(answer)
    return kept


class Renamer(ast.NodeTransformer):
    """Renames the local variables of functions (not parameters, attributes or top-level names)."""

    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        """A lambda's parameters renamed with the names its body reads (``lambda h: f(h)`` stays one function)."""
        for argument in ast.walk(node.args):
            if isinstance(argument, ast.arg):
                argument.arg = self.names.get(argument.arg, argument.arg)
        self.generic_visit(node)
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
    """The names and attributes (``self.w_q``) a statement reads, and those it writes (``x[i] = ...`` writes ``x``)."""
    nodes = [n for n in ast.walk(statement) if isinstance(n, ast.Name | ast.Attribute)]
    reads = {ast.unparse(n) for n in nodes if isinstance(n.ctx, ast.Load)}
    writes = {ast.unparse(n) for n in nodes if isinstance(n.ctx, ast.Store)}
    subscripts = [n for n in ast.walk(statement) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)]
    return reads, writes | {ast.unparse(n.value) for n in subscripts}


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


class CallInliner(ast.NodeTransformer):
    """Replaces each call of ``helper`` (a one-``return`` function) by its expression on the call's arguments."""

    def __init__(self, helper: ast.FunctionDef):
        self.helper = helper
        self.parameters = [a.arg for a in helper.args.args]
        self.expression = helper.body[-1].value

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id == self.helper.name):
            return node
        if node.keywords or len(node.args) != len(self.parameters):
            return node
        arguments = dict(zip(self.parameters, node.args, strict=True))
        return Substitute(arguments).visit(copy.deepcopy(self.expression))


class Substitute(ast.NodeTransformer):
    def __init__(self, values: dict[str, ast.expr]):
        self.values = values

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.values[node.id]) if node.id in self.values else node


def inline_helper(tree: ast.Module) -> bool:
    """Inline a top-level helper whose body is one ``return`` into every call, and drop its ``def``."""
    for index, node in enumerate(tree.body):
        if not (
            isinstance(node, ast.FunctionDef)
            and len(node.body) == 1
            and isinstance(node.body[0], ast.Return)
            and node.body[0].value is not None
            and not node.decorator_list
            and not (node.args.vararg or node.args.kwarg or node.args.kwonlyargs or node.args.defaults)
        ):
            continue
        rest = tree.body[:index] + tree.body[index + 1 :]
        calls = [
            n for s in rest for n in ast.walk(s) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == node.name
        ]
        if not calls or any(n.keywords or len(n.args) != len(node.args.args) for n in calls):
            continue
        inliner = CallInliner(node)
        tree.body = [inliner.visit(statement) for statement in rest]
        return True
    return False


def disguise(code: str, rng: random.Random, inline: bool = False) -> tuple[str, bool]:
    """``code`` as a copier hides it: renamed, reordered, re-printed, other comments and blank lines.

    With ``inline``, a one-``return`` helper function the answer defines is inlined into its
    callers; the second value says whether one was. Comments go between statements, never
    inside a multi-line string.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, False
    inlined = inline and inline_helper(tree)
    Renamer({name: f"{name}_{rng.choice(['tmp', 'val', 'res', 'my'])}" for name in local_names(tree)}).visit(tree)
    swap_free_statements(tree)
    lines, in_string = [], False
    for line in ast.unparse(ast.fix_missing_locations(tree)).splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        opens_or_closes = (line.count('"""') + line.count("'''")) % 2 == 1
        if not in_string and rng.random() < 0.25:
            lines.append(f"{indent}# {rng.choice(['compute this', 'next step', 'see lecture', 'TODO tidy'])}")
        lines.append(line)
        in_string ^= opens_or_closes
        if not in_string and rng.random() < 0.2:
            lines.append("")
    return "\n".join(lines) + "\n", inlined


def has_helper(code: str) -> bool:
    """Whether ``code`` defines a one-``return`` helper that :func:`inline_helper` can inline."""
    return inline_helper(ast.parse(code))


@dataclass
class SimilarityClass:
    """Who handed in what: answers per student, and which pairs are planted copies."""

    assignment: str
    answers: dict[str, dict[str, str]] = field(default_factory=dict)  # student -> {grade id: code}
    added: dict[str, str] = field(default_factory=dict)  # student -> the code cell they added
    copies: set[frozenset[str]] = field(default_factory=set)  # planted pairs
    untouched: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    failures: dict[str, dict[str, str]] = field(default_factory=dict)  # student -> {failed test: message}
    families: dict[str, tuple[str, ...]] = field(default_factory=dict)  # copier -> the disguise families it used
    source: dict[str, str] = field(default_factory=dict)  # copier -> whom they copied
    verbatim: tuple[str, ...] = ()  # a student whose answers nobody else wrote, and their verbatim copy


DESIGNS = ("uniform", "popular")  # how independent students draw their answers (see independent_answers)
POPULAR = 3  # the answers of each exercise that the "popular" design makes common


def weights(options: int, design: str) -> list[int]:
    """Each answer's weight in a draw: equal (``uniform``), or the pool's first :data:`POPULAR` answers (the
    reference and the first variants) drawn as often as all the others together (``popular``: half the class
    hands in one of a few answers, as in a class that learned from one lecture)."""
    if design == "uniform" or options <= POPULAR:
        return [1] * options
    return [options - POPULAR] * POPULAR + [POPULAR] * (options - POPULAR)


def draw(chance: list[int], rng: random.Random) -> int:
    """An index drawn with these weights (equal weights as ``randrange``: the uniform classes are those of before)."""
    if len(set(chance)) == 1:
        return rng.randrange(len(chance))
    return rng.choices(range(len(chance)), chance)[0]


def independent_answers(
    pool: dict[str, list[str]], students: int, rng: random.Random, design: str = "uniform"
) -> list[dict[str, str]]:
    """``students`` different combinations of the pool's answers, one per exercise, drawn at random.

    No two independent students hand in the same notebook: drawn without replacement among the
    combinations (each exercise's answer drawn by :func:`weights` of ``design``).
    """
    seen: set[tuple[int, ...]] = set()
    drawn = []
    chances = [weights(len(options), design) for options in pool.values()]
    while len(drawn) < students:
        choice = tuple(draw(chance, rng) for chance in chances)
        if choice not in seen:
            seen.add(choice)
            drawn.append({exercise: pool[exercise][i] for exercise, i in zip(pool, choice, strict=True)})
    return drawn


def build_class(
    assignment: str, students: int, copies: int, seed: int = 0, design: str = "uniform"
) -> SimilarityClass:
    """``students`` independent students, ``copies`` of them copied, two untouched and two empty notebooks.

    The copied students are drawn among those whose notebook has an answer with a helper function
    when there are enough, so that the helper-inlining disguise is exercised on every notebook.
    """
    rng = random.Random(f"{assignment}-{seed}")
    pool = answer_pool(assignment)
    made = SimilarityClass(assignment)
    for index, answers in enumerate(independent_answers(pool, students, rng, design)):
        made.answers[f"s{index:03d}"] = answers
    helpers = sorted(s for s, answers in made.answers.items() if any(map(has_helper, answers.values())))
    others = sorted(set(made.answers) - set(helpers))
    originals = rng.sample(helpers, min(copies, len(helpers)))
    originals += rng.sample(others, copies - len(originals))
    for index, original in enumerate(originals):
        copier, to_inline = f"c{index:02d}", True  # one helper inlined, in the first exercise with one
        made.answers[copier] = {}
        for exercise, code in sorted(made.answers[original].items(), key=lambda item: not has_helper(item[1])):
            made.answers[copier][exercise], inlined = disguise(code, rng, inline=to_inline)
            to_inline = to_inline and not inlined
        made.answers[copier] = {exercise: made.answers[copier][exercise] for exercise in pool}
        made.copies.add(frozenset({original, copier}))
    made.untouched = ["untouched1", "untouched2"]
    made.empty = ["empty1", "empty2"]
    for student in made.untouched:
        made.answers[student] = {}
    for student in made.empty:
        made.answers[student] = dict.fromkeys(pool, "")
    made.failures = {student: failures_of(assignment, answers) for student, answers in made.answers.items()}
    for pair in made.copies:  # a copy computes what its source computes, mistakes included
        copier, original = sorted(pair)
        made.failures[copier] = made.failures[original]
    return made


@functools.cache
def mutants(assignment: str) -> dict[tuple[str, str], str]:
    """``{(exercise, code): mutant name}`` for the variants of ``testbed/variants`` that are mistakes."""
    reference = reference_answers(read(source_notebook(assignment)))
    return {
        (variant.cell, variant.apply(reference[variant.cell])): variant.name
        for variant in VARIANTS.get(assignment, [])
        if variant.kind == "mutant"
    }


def failures_of(assignment: str, answers: dict[str, str]) -> dict[str, str]:
    """The grader's failed tests for these answers, as the tests would report them: a mutant fails its
    exercise's test with one message per mistake (the same wrong values), a blank answer the stub's error."""
    found = {}
    for exercise, code in answers.items():
        if not code.strip():
            found[f"test_{exercise}"] = "NotImplementedError: "
        elif mistake := mutants(assignment).get((exercise, code)):
            found[f"test_{exercise}"] = f"AssertionError: wrong values ({mistake})"
    return found


def build_disguised_class(
    assignment: str, students: int, seed: int = 0, design: str = "uniform"
) -> SimilarityClass:
    """``students`` independent students and a copy per disguise family, alone and three at a time.

    The families are those of :mod:`.similarity_disguises`.

    Each copy copies a different independent student, drawn among those on whose answers every
    family of its disguise changes something (so that no copy is disguised in name only), or, where
    no student's answers take them all, one more independent student drawn uniformly; it is
    named ``d<k>`` and its families are kept in ``families``.
    """
    made = build_class(assignment, students, copies=0, seed=seed, design=design)
    rng = random.Random(f"{assignment}-disguised-{seed}")
    candidates = sorted(s for s in made.answers if s.startswith("s"))
    rng.shuffle(candidates)
    for index, families in enumerate([(f,) for f in FAMILIES] + list(TRIPLES)):
        found = next((done for source in candidates if (done := disguise_all(made, source, families))), None)
        if found is None:  # nobody in the class wrote answers this takes: one more student, drawn uniformly
            found = extra_source(made, families, rng)
            candidates.append(found[0])
        source, answers, added = found
        candidates.remove(source)
        copier = f"d{index:02d}"
        made.answers[copier] = answers
        if added:
            made.added[copier] = "\n\n".join(added) + "\n"
        made.copies.add(frozenset({source, copier}))
        made.families[copier] = families
        made.source[copier] = source
        made.failures[copier] = made.failures[source]
    drawn = unwritten_answers(made, rng)
    own = {exercise: f"{code}\ntorch.manual_seed({rng.randrange(10**6)})\n" for exercise, code in drawn.items()}
    made.verbatim = ("u00", "u01")
    for student in made.verbatim:
        made.answers[student], made.failures[student] = own, failures_of(assignment, drawn)
    made.copies.add(frozenset(made.verbatim))
    return made


def unwritten_answers(made: SimilarityClass, rng: random.Random) -> dict[str, str]:
    """Per exercise, an answer of the pool that no student of the class hands in, drawn at random; where every one is
    handed in, one of those the fewest hand in.

    The verbatim pair's answers: two identical notebooks whose answers nobody else wrote. An independent student's
    answers would not do: that student stays in the class, so the three hand in the same notebook (a cluster an
    instructor reads as such, not a pair), and the other students who drew the same answers share them too.
    """
    chosen = {}
    for exercise, options in answer_pool(made.assignment).items():
        holders = Counter(answers.get(exercise) for answers in made.answers.values())
        fewest = min(holders[answer] for answer in options)
        chosen[exercise] = rng.choice([answer for answer in options if holders[answer] == fewest])
    return chosen


def disguise_all(made: SimilarityClass, source: str, families: tuple[str, ...]) -> tuple[str, dict, list] | None:
    """``source``'s answers with every family of ``families`` applied, and the cells it added; None when a family
    changes nothing there."""
    added: list[str] = []
    answers, applied = {}, set()
    for exercise, code in made.answers[source].items():
        answers[exercise], changed = disguised(code, families, added, course_parameters(made.assignment))
        applied |= changed
    return (source, answers, added) if applied == set(families) else None


def extra_source(made: SimilarityClass, families: tuple[str, ...], rng: random.Random) -> tuple[str, dict, list]:
    """One more independent student (uniform over the pool) whose answers take every family, added to the class
    (a class of popular answers may hold none); like every independent student, with a mix of answers no other
    student of the class hands in (a draw that repeats one would plant an identical pair, not an independent one)."""
    pool = answer_pool(made.assignment)
    for _ in range(1000):
        student = f"s{len([s for s in made.answers if s.startswith('s')]):03d}"
        drawn = independent_answers(pool, 1, rng)[0]
        if drawn in made.answers.values():
            continue
        made.answers[student] = drawn
        if found := disguise_all(made, student, families):
            made.failures[student] = failures_of(made.assignment, made.answers[student])
            return found
        del made.answers[student]
    raise ValueError(f"{made.assignment}: no answers of the pool take every disguise of {families}")


def notebook_of(made: SimilarityClass, student: str, release: NotebookNode) -> NotebookNode:
    notebook = fill_answers(release, made.answers[student])
    if student in made.added:
        cell = new_code_cell(made.added[student])
        del cell["id"]
        notebook.cells.append(cell)
    return notebook


def hand_in(course: Course, made: SimilarityClass) -> None:
    """Every student's notebook, where ``collect`` puts it in ``course``, and the grader's results for it."""
    release = nbformat.read(release_notebook(made.assignment), as_version=4)
    for student in made.answers:
        submit(course, made.assignment, student, notebook_of(made, student, release))
        tests = [
            TestResult(made.assignment, test, max_score=1.0, message=message)
            for test, message in made.failures.get(student, {}).items()
        ]
        save_result(course, SubmissionResult(made.assignment, student, Status.GRADED, tests=tests))


def build_reference_copy_class(
    assignment: str, students: int, seed: int = 0, design: str = "uniform"
) -> SimilarityClass:
    """``students`` independent students who never hand in the reference answer itself, and a disguised copy of the
    published reference per disguise family, alone and three at a time (``r<k>``; ``families`` holds each one's,
    ``source`` names ``"reference"``).

    The independent students draw from the pool without the reference (its mutants stay: a student who makes the
    mistake a mutant makes writes the rest of the reference's lines too, which is the hard case for this detector).
    A family that changes nothing in the reference's answers plants no copy.
    """
    rng = random.Random(f"{assignment}-reference-{seed}")
    reference = reference_answers(read(source_notebook(assignment)))
    pool = {exercise: answers[1:] or answers for exercise, answers in answer_pool(assignment).items()}
    made = SimilarityClass(assignment)
    for index, answers in enumerate(independent_answers(pool, students, rng, design)):
        made.answers[f"s{index:03d}"] = answers
    for index, families in enumerate([(f,) for f in FAMILIES] + list(TRIPLES)):
        added: list[str] = []
        answers, applied = {}, set()
        for exercise in pool:
            answers[exercise], changed = disguised(reference[exercise], families, added, course_parameters(assignment))
            applied |= changed
        if applied != set(families):
            continue
        copier = f"r{index:02d}"
        made.answers[copier] = answers
        if added:
            made.added[copier] = "\n\n".join(added) + "\n"
        made.families[copier] = families
        made.source[copier] = "reference"
    return made
