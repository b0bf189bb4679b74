"""The similarity page: per notebook, the listed pairs ranked, each with its answers side by side.

The shared parts are highlighted from copydetect's matched slices. Every piece of student code
is html-escaped (it is hostile input). The page ranks; it never decides.
"""

import html
from gettext import ngettext
from pathlib import Path

from autograder.similarity.answers import ClassWork
from autograder.similarity.compare import CEILING_SHARE, LISTED_Z, TOP_LISTED, AssignmentSimilarity, Pair
from autograder.similarity.fingerprints import fingerprint, matched_spans
from autograder.similarity.scores import MIN_STUDENTS, pair_count

SIDE_BY_SIDE = 50  # listed pairs per notebook shown side by side (each re-fingerprints its two answers)
STYLE = (
    "body{font-family:sans-serif;margin:2em} table{border-collapse:collapse} td,th{border:1px solid #ccc;"
    "padding:4px 8px;vertical-align:top} pre{margin:0;white-space:pre-wrap;font-size:12px} mark{background:#ffe08a}"
)


def counted(count: int, singular: str, plural: str) -> str:
    """``"1 pair"``, ``"3 pairs"``."""
    return ngettext(singular, plural, count).format(count)


def too_small_note(result: AssignmentSimilarity) -> str:
    """Why nothing is ranked in a class this small, and how many students it takes."""
    students, pairs = counted(result.answered, "{} student", "{} students"), pair_count(result.answered)
    return (
        f"<p class='too-small'><strong>Too few students to tell:</strong> with {students} who answered "
        f"({counted(pairs, '{} pair', '{} pairs')}) the class is too small to tell copied from independent work; "
        f"at least {MIN_STUDENTS} students are needed. A pair is measured against the median and the spread of "
        "the class's pairs, and with fewer students most pairs hold one of the two students being compared, so "
        "they are not independent work (a copier's pairs with the others repeat the original's). No pair is ranked "
        "and no z-score is shown: a pair is listed when the two hand in the same answer to an exercise after the "
        "canonical form (names, comments, formatting and the other disguises undone) and no other student does, "
        "the pairs with the most such answers first.</p>"
    )


def highlighted(code: str, spans: list[tuple[int, int]]) -> str:
    """``code`` escaped, the ``spans`` (sorted, possibly overlapping) wrapped in ``<mark>``."""
    parts, done = [], 0
    for start, end in sorted(spans):
        start = max(start, done)
        if end <= start:
            continue
        parts += [html.escape(code[done:start]), "<mark>", html.escape(code[start:end]), "</mark>"]
        done = end
    parts.append(html.escape(code[done:]))
    return "".join(parts)


def side_by_side(pair: Pair, answers: dict[str, dict[str, str]], boilerplate: frozenset[int], ranked: bool) -> str:
    """The pair's answers, exercise by exercise, the shared parts highlighted (z-scores only where ``ranked``)."""
    rows = []
    for part, (score, z) in pair.exercises.items():
        # As written (not canonical), so that the highlighted spans fall on the students' own code.
        first = fingerprint(answers[pair.first].get(part, ""), boilerplate, structural=False)
        second = fingerprint(answers[pair.second].get(part, ""), boilerplate, structural=False)
        left, right = matched_spans(first, second)
        rows.append(
            f"<tr><th colspan=2>{html.escape(part)}: score {score:.2f}{f', z {z:+.1f}' if ranked else ''}</th></tr>"
            f"<tr><td><pre>{highlighted(first.code, left)}</pre></td>"
            f"<td><pre>{highlighted(second.code, right)}</pre></td></tr>"
        )
    header = f"<tr><th>{html.escape(pair.first)}</th><th>{html.escape(pair.second)}</th></tr>"
    return f"<table style='width:100%'>{header}{''.join(rows)}</table>"


def pair_table(pairs: list[Pair], ranked: bool) -> str:
    """The pairs with their scores: z-scores where ``ranked``, else how many answers only the two share."""

    def exercises(pair: Pair) -> str:
        return ", ".join(f"{html.escape(part)} {score:.2f}" + (f" ({z:+.1f})" if ranked else "")
                         for part, (score, z) in pair.exercises.items())

    rows = "".join(
        f"<tr><td>{html.escape(p.first)}</td><td>{html.escape(p.second)}</td>"
        f"<td>{f'{p.z:+.1f}</td><td>{p.z_apart:+.1f}' if ranked else p.same_alone}</td><td>{p.score:.2f}</td>"
        f"<td>{p.shared_failures} ({p.failure_evidence:.1f})</td><td>{exercises(p)}</td></tr>"
        for p in pairs
    )
    first = "notebook z</th><th>z without the closest exercise" if ranked else "same answers nobody else handed in"
    last = "exercises: score (z)" if ranked else "exercises: score"
    return (f"<table><tr><th>student</th><th>student</th><th>{first}</th><th>notebook score</th>"
            f"<th>shared failures (evidence)</th><th>{last}</th></tr>{rows}</table>")


REFERENCE = "published reference"  # the reference's name on the page, beside the students'


def reference_section(result: AssignmentSimilarity, answers: dict[str, dict[str, str]], boilerplate: frozenset[int]
                      ) -> list[str]:
    """The hand-ins closest to the published reference answers, each beside it (as a listed pair is)."""
    matches = result.reference_matches()
    if not matches:
        return []
    rows = "".join(
        f"<tr><td>{html.escape(m.student)}</td><td>{m.z:+.1f}</td><td>{m.score:.2f}</td>"
        f"<td>{', '.join(f'{html.escape(part)} {score:.2f}' for part, score in m.exercises.items())}</td></tr>"
        for m in matches
    )
    parts = ["<h3>Closest to the published reference answers</h3>",
             "<p>Once the course is public, so are its reference answers. Each hand-in is compared with them as with "
             "one more classmate, disguises undone the same way, and ranked by the same notebook z (against the "
             "class's own pairs). A high z here means the answers lie as close to the published ones as a copy lies "
             "to its source; answers to short exercises often match the reference honestly.</p>",
             f"<table class='reference'><tr><th>student</th><th>notebook z</th><th>notebook score</th>"
             f"<th>exercises: score</th></tr>{rows}</table>"]
    beside = {**answers, REFERENCE: result.reference_answers}
    for match in matches[:SIDE_BY_SIDE]:
        pair = Pair(match.student, REFERENCE, match.score, match.z,
                    {part: (score, 0.0) for part, score in match.exercises.items()})
        parts += [f"<h4>{html.escape(match.student)} and the {REFERENCE}: z {match.z:+.1f}</h4>",
                  side_by_side(pair, beside, boilerplate, ranked=False)]
    return parts


def assignment_section(result: AssignmentSimilarity, work: ClassWork, boilerplate: frozenset[int]) -> list[str]:
    answers = {submission.student: submission.answers for submission in work.submissions}
    listed = result.listed()
    counts = (f"{counted(len(result.students), '{} submission', '{} submissions')}, "
              f"{counted(len(result), '{} pair', '{} pairs')}, {len(listed)} listed.")
    if len(listed) > SIDE_BY_SIDE:
        counts += f" The first {SIDE_BY_SIDE} listed pairs are shown side by side below; the table holds them all."
    parts = [f"<h2>{html.escape(result.assignment)}</h2>", f"<p>{counts}</p>"]
    unanswered = [part for part, stats in result.stats.items() if not stats.answered]
    if unanswered:
        parts.append(f"<p class='unanswered'><strong>Nobody answered:</strong> {html.escape(', '.join(unanswered))} "
                     "(no pair is scored on it).</p>")
    if result.too_small:
        parts.append(too_small_note(result))
    elif not result.can_tell:
        parts.append(
            f"<p class='cannot-tell'><strong>Too short or too alike to tell:</strong> even two identical notebooks "
            f"whose answers nobody else wrote reach only z {result.ceiling_z:+.1f} here (a pair is listed from "
            f"{LISTED_Z}), so a high rank in this notebook means little. Only pairs within "
            f"{1 - CEILING_SHARE:.0%} of that ceiling (identical answers almost nobody else wrote) are listed.</p>"
        )
    if one_line := result.one_line():
        parts.append(
            f"<p class='cannot-tell one-line'><strong>Cannot tell a copy from one rare shared line:</strong> "
            f"{html.escape(one_line.first)} and {html.escape(one_line.second)} reach z {one_line.z:+.1f}, as high as "
            f"pairs alike on several exercises, yet with their closest exercise as alike as the class's median pair "
            f"they reach only z {one_line.z_apart:+.1f}: here one answer two students share and nobody else wrote (a "
            f"single line, in a short exercise) ranks a pair as a copy does. Read the column <em>z without the "
            f"closest exercise</em>: a copy is alike on every exercise, one shared line on one.</p>"
        )
    ranked = not result.too_small
    if listed:
        parts.append(pair_table(listed, ranked))
    sharing = result.sharing_failures()
    if sharing:
        parts += ["<h3>Pairs that fail the same tests the same way</h3>",
                  "<p>The grader's failed tests with the same message, each weighed by how few students share it "
                  "(log n / holders); correct answers share nothing here. Shown beside the text's scores, "
                  "not mixed into them.</p>", pair_table(sharing, ranked)]
    copies = "".join(
        f"<li>{html.escape(c.student)}: {html.escape(c.exercise)} "
        f"({counted(c.same, '{} student hands', '{} students hand')} in the same)</li>"
        for c in result.reference_copies
    )
    if copies:
        parts += ["<h3>Answers identical to the reference solution</h3>", f"<ul>{copies}</ul>"]
    parts += reference_section(result, answers, boilerplate)
    if result.unreadable:
        items = "".join(f"<li>{html.escape(s)}: {html.escape(why)}</li>" for s, why in result.unreadable.items())
        parts += ["<h3>Not compared (unreadable)</h3>", f"<ul>{items}</ul>"]
    shown = listed[:SIDE_BY_SIDE]
    for rank, pair in enumerate(shown, 1):
        how = f"z {pair.z:+.1f}" if ranked else counted(pair.same_alone, "{} answer", "{} answers") + " only they share"
        parts += [f"<h3>{rank}. {html.escape(pair.first)} and {html.escape(pair.second)}: {how}</h3>",
                  side_by_side(pair, answers, boilerplate, ranked)]
    return parts


def write_page(sections: list[list[str]], output: Path) -> Path:
    parts = [f"<html><head><meta charset='utf-8'><title>Similarity report</title><style>{STYLE}</style></head><body>",
             "<h1>Similarity report</h1>",
             "<p>This page ranks; it does not decide. A pair is listed when its notebook z-score (how far its "
             f"closeness lies above the class's other pairs, in robust standard deviations) reaches {LISTED_Z}, "
             f"or when it is among the {TOP_LISTED} highest pairs of its notebook (above the median), whatever "
             "its z-score: the top of a class is always worth a look, an outlier or not. "
             "Short exercises have one natural answer: read the code before drawing a conclusion. A notebook "
             "whose answers are too short or too alike to tell a copy from common work says so, and so does one "
             f"that fewer than {MIN_STUDENTS} students answered, too few to rank at all. Beside the "
             "code's scores, <em>shared failures</em> counts the hidden tests both fail with the same message, "
             "weighed by how few students fail them so (correct answers share nothing there).</p>"]
    for section in sections:
        parts += section
    parts.append("</body></html>")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(parts), encoding="utf-8")
    return output
