"""Code normalised so that disguises do not hide a copy, then fingerprinted as MOSS does (copydetect).

Normalising keeps what a copier cannot change without changing what the code does and drops
what they can: comments, blank lines, spacing, IPython magics, trailing commas and grouping
parentheses go; every string becomes ``S``; names become ``V0, V1, ...`` in order of appearance
within each logical line, except keywords, builtins, attribute names and a call's keyword names
(``torch.ones(...).tril()``
reads ``V0.ones(...).tril()``). So a renamed variable does not show, but a library call does,
and so does which variable goes where (``f(x, mem, mem)`` is not ``f(x, x, x)``). copydetect's own
filter maps attribute names to ``V`` too, which makes ``.tril()`` and ``.triu()`` the same
answer: on exercises one library call long, nothing would tell independent answers apart.

The fingerprints are copydetect's winnowing (the smallest hash in each window of ``WINDOW``
k-gram hashes, so a shared run of ``K + WINDOW - 1`` characters is always seen) over the
``K``-character windows of each logical line; no window spans two lines, so reordering
statements changes no fingerprint. The hashes are a seedless polynomial hash (see :func:`kgram_hashes`).
"""

import bisect
import builtins
import hashlib
import keyword
import re
from dataclasses import dataclass, field

import numpy as np
from copydetect.utils import find_fingerprint_overlap, get_copied_slices, winnow

from autograder.similarity.canonical import Helpers, canonical
from autograder.similarity.signatures import Signatures

K = 15  # characters of normalised code per hash: shorter runs are noise
WINDOW = 3  # winnowing window: a shared run of K + WINDOW - 1 = 17 characters is always caught
SHORT = 8  # the shortest logical line that counts (``V0.eval()``); ``else:`` and ``return V0`` are noise

TOKEN = re.compile(
    r"""(?P<skip>\s+|\#[^\n]*|^[ \t]*[%!][^\n]*)
    |(?P<string>[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?(?:\"\"\"|\Z)|'''[\s\S]*?(?:'''|\Z)
                               |"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?))
    |(?P<name>[^\W\d]\w*)
    |(?P<number>\.?\d(?:[\w.]|(?<=[eE])[-+])*)
    |(?P<op>\*\*=?|//=?|->|<<=?|>>=?|\.\.\.|[-+*/%@&|^<>=!:]=|.)""",
    re.M | re.X,
)
MAGIC = re.compile(r"^[ \t]*[%!].*$", re.M)  # an IPython line (``%timeit ...``, ``!pip ...``)
KEYWORDS = frozenset(keyword.kwlist)
KEPT_NAMES = frozenset(dir(builtins)) | KEYWORDS


@dataclass(frozen=True)
class Normalised:
    """Normalised code and, for each of its characters, where its token lies in the original."""

    text: str
    offsets: list[int]  # where each token's piece starts in ``text``
    starts: list[int]  # where each token starts in the original code
    ends: list[int]  # and where it ends
    statements: list[tuple[int, int]]  # each logical line's [start, end) in ``text``

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original code behind the normalised characters ``[start, end)``."""
        first, last = bisect.bisect_right(self.offsets, start) - 1, bisect.bisect_right(self.offsets, end - 1) - 1
        return self.starts[first], self.ends[last]


def normalise(code: str) -> Normalised:
    """``code`` without comments, whitespace or magics, its names ``V`` and strings ``S`` (see the module).

    A trailing comma before a closing bracket goes too, and so do grouping parentheses (those
    not of a call or a subscript): formatters add and drop both. The logical lines (statements,
    and the headers of compound ones) are kept apart.
    """
    pieces: list[str] = []
    offsets: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    statements: list[tuple[int, int]] = []
    previous, previous_kind, length, statement_start = "", "", 0, 0
    brackets: list[str] = []  # open brackets; "" for a grouping parenthesis, left out of the text
    numbered: dict[str, str] = {}  # the current line's names, V0, V1, ... in order of appearance
    first_piece = 0  # the current line's first piece (``def``: its parentheses hold parameters, not keywords)
    code = MAGIC.sub(lambda line: " " * len(line.group()), code)  # blanked, so the offsets still hold
    for match in TOKEN.finditer(code):
        kind, token = match.lastgroup, match.group()
        if kind == "skip":
            if not brackets and "\n" in token and length > statement_start:
                statements.append((statement_start, length))
                pieces.append("\n")  # no hash spans two lines
                offsets.append(length)
                starts.append(match.start())
                ends.append(match.end())
                length += 1
                statement_start, numbered, first_piece = length, {}, len(pieces)
            continue
        if kind == "string":
            piece = "S"
        elif kind == "name":
            in_call = brackets[-1:] == ["("] and pieces[first_piece : first_piece + 1] not in (["def"], [" def"])
            kept = previous == "." or token in KEPT_NAMES or (in_call and is_keyword(code, match.end()))
            piece = token if kept else numbered.setdefault(token, f"V{len(numbered)}")
        else:
            piece = token
            if token in ")]}" and previous == ",":
                pieces.pop()
                del offsets[-1], starts[-1], ends[-1]
                length -= 1
            if token in ("(", "[", "{"):
                grouping = token == "(" and not (
                    previous_kind in {"name", "string"} and previous not in KEYWORDS or previous in {")", "]"}
                )
                brackets.append("" if grouping else token)
                if grouping:
                    previous, previous_kind = token, kind
                    continue
            elif token in (")", "]", "}") and brackets and not brackets.pop():
                previous, previous_kind = token, kind
                continue
        if (
            kind in {"name", "number"}
            and length > statement_start
            and (pieces[-1][-1].isalnum() or pieces[-1][-1] == "_")
        ):
            piece = " " + piece  # ``return V``, not ``returnV``: two words stay two words
        previous, previous_kind = token, kind
        pieces.append(piece)
        offsets.append(length)
        starts.append(match.start())
        ends.append(match.end())
        length += len(piece)
    if length > statement_start:
        statements.append((statement_start, length))
    return Normalised("".join(pieces), offsets, starts, ends, statements)


KEYWORD_ARGUMENT = re.compile(r"[ \t]*=(?!=)")


def is_keyword(code: str, end: int) -> bool:
    """Whether the name that ends at ``end`` inside a call's parentheses is a keyword argument's (``dim=``).

    A keyword is the parameter's name, part of the library's interface like an attribute's: kept.
    """
    return KEYWORD_ARGUMENT.match(code, end) is not None


@dataclass(frozen=True)
class Fingerprint:
    """The winnowed hashes of one answer (the release's own hashes removed) and where each occurs."""

    code: str
    normalised: Normalised
    positions: dict[int, list[int]] = field(repr=False)  # hash -> its starts in the normalised text

    @property
    def hashes(self) -> set[int]:
        return set(self.positions)

    def __len__(self) -> int:
        return len(self.positions)


POWERS = np.array([pow(1_000_003, K - 1 - j, 2**64) for j in range(K)], dtype=np.uint64)  # polynomial hash
HASH_BITS = 52  # winnow compares hashes as floats: 52 bits stay exact


def kgram_hashes(text: str) -> np.ndarray:
    """A 52-bit hash of each ``K``-character window of ``text``, all at once (numpy).

    A polynomial hash of the characters' code points (wrapping at 2**64), then mixed
    (splitmix64's finaliser). copydetect hashes with Python's ``hash``, which each process salts
    anew: the same class would rank differently from one run to the next, and forked workers
    could not be trusted to agree; this one is the same everywhere.
    """
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    count = codes.size - K + 1
    if count < 1:
        return np.zeros(0, dtype=np.int64)
    with np.errstate(over="ignore"):
        value = codes[:count] * POWERS[0]
        for offset in range(1, K):
            value += codes[offset : offset + count] * POWERS[offset]
        value ^= value >> np.uint64(30)
        value *= np.uint64(0xBF58476D1CE4E5B9)
        value ^= value >> np.uint64(27)
        value *= np.uint64(0x94D049BB133111EB)
        value ^= value >> np.uint64(31)
    return (value >> np.uint64(64 - HASH_BITS)).astype(np.int64)


def statement_hash(line: str) -> int:
    """A 52-bit hash of a whole logical line (BLAKE2b, seedless): the same statement, token for token.

    Winnowing keeps only some of a line's k-gram hashes, so two lines one token apart (``/ d_k``
    and ``/ math.sqrt(d_k)``) can keep the same ones; this hash tells them apart, and moves with
    the line wherever a copier puts it.
    """
    return int.from_bytes(hashlib.blake2b(line.encode(), digest_size=8, person=b"statement").digest()) >> 12


def hashes_of(normalised: Normalised) -> dict[int, list[int]]:
    """copydetect's winnowing of each logical line's k-gram hashes: hash -> where it starts in the text.

    No hash spans two lines, so swapping two statements changes no fingerprint. Each line of
    ``SHORT`` characters or more (``V0.eval()``; not ``else:``) also counts whole, as one
    :func:`statement_hash`; a line shorter than ``K`` has only that one. The
    k-gram hashes of the whole text are computed at once and each line takes its own slice.
    """
    found: dict[int, list[int]] = {}
    text = normalised.text
    every = kgram_hashes(text)
    for start, end in normalised.statements:
        if end - start >= K:
            selected, where = winnow(every[start : end - K + 1], WINDOW, remove_duplicates=False)
            for value, index in zip(selected.tolist(), where.tolist(), strict=True):
                found.setdefault(value, []).append(start + index)
        if end - start >= SHORT:
            found.setdefault(statement_hash(text[start:end]), []).append(start)
    return found


ORDER_TOKEN = re.compile(
    r"""(?P<string>[rRbBuUfF]{0,2}(?:'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"))|(?<![.\w])(?P<name>[^\W\d]\w*)"""
)


def order_key(statement: str) -> str:
    """What orders free statements: ``statement`` (as :func:`ast.unparse` prints it) with its strings ``S``
    and its names ``V0, V1, ...`` as :func:`normalise` has them, so that renaming does not reorder.

    The printed text has one spacing and one kind of quotes already: the regular expression does
    what :func:`normalise`'s tokenizer would, for about a third of its cost.
    """
    numbered: dict[str, str] = {}

    def replace(match: re.Match) -> str:
        name = match.group("name")
        if name is None:
            return "S"
        return name if name in KEPT_NAMES else numbered.setdefault(name, f"V{len(numbered)}")

    return ORDER_TOKEN.sub(replace, statement)


@dataclass(frozen=True)
class Context:
    """What the rest of the notebook says about an answer: the functions the release asks for (``keep``),
    and the student's other code (``elsewhere``), where a function the answer defines may be called."""

    keep: frozenset[str] | None  # None: every function is kept
    elsewhere: str = ""
    signatures: Signatures = field(default_factory=dict, hash=False)  # the course's and the added cells'


def structure(code: str, helpers: Helpers | None = None, context: Context | None = None) -> str:
    """``code`` in the canonical form of :mod:`.canonical`, free statements ordered by :func:`order_key`."""
    code = MAGIC.sub("", code)  # IPython lines do not parse
    if context is None:
        return canonical(code, helpers, key=order_key)
    return canonical(code, helpers, order_key, context.keep, context.elsewhere, context.signatures)


def fingerprint(
    code: str,
    boilerplate: frozenset[int] = frozenset(),
    helpers: Helpers | None = None,
    structural: bool = True,
    context: Context | None = None,
) -> Fingerprint:
    """The fingerprint of ``code`` without the hashes in ``boilerplate`` (the release's own code).

    With ``structural`` (the scores), the code is first put in canonical form (:func:`structure`,
    ``helpers`` being the added cells' helper functions) and the fingerprint's ``code`` is that form;
    without it (the page's highlighting), the code as written, so that spans fall on what the
    student wrote. The boilerplate is dropped here rather than by copydetect's ``boilerplate``
    argument, which assumes a document repeats no hash and then drops hashes the boilerplate does
    not have.
    """
    text = structure(code, helpers, context) if structural else code
    normalised = normalise(text)
    positions = {h: where for h, where in hashes_of(normalised).items() if h not in boilerplate}
    return Fingerprint(text, normalised, positions)


def boilerplate_hashes(code: str, signatures: Signatures | None = None) -> frozenset[int]:
    """Every hash (not only the winnowed ones) of code every submission holds (the release's), as is and canonical
    (``signatures``: the course's, as the answers are bound to)."""
    found: set[int] = set()
    for text in {code, structure(code, context=Context(None, "", signatures or {}))}:
        normalised = normalise(text)
        every = kgram_hashes(normalised.text)
        for start, end in normalised.statements:
            found |= set(every[start : end - K + 1].tolist()) | {statement_hash(normalised.text[start:end])}
    return frozenset(found)


def matched_spans(first: Fingerprint, second: Fingerprint) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The spans of each answer's original code that the other shares (copydetect's copied slices)."""
    where_first, where_second = find_fingerprint_overlap(first.hashes, second.hashes, first.positions, second.positions)
    return spans(first, where_first), spans(second, where_second)


def spans(answer: Fingerprint, where: np.ndarray) -> list[tuple[int, int]]:
    slices = get_copied_slices(where, K)
    return [answer.normalised.original(int(start), int(end)) for start, end in zip(*slices, strict=True)]
