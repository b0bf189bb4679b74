"""The similarity page: per notebook, the listed pairs ranked, each with its answers side by side.

The shared parts are highlighted from copydetect's matched slices. Every piece of student code
is html-escaped (it is hostile input). The page ranks; it never decides.
"""

import html
from pathlib import Path

from autograder.similarity.answers import ClassWork
from autograder.similarity.compare import CEILING_SHARE, LISTED_Z, TOP_LISTED, AssignmentSimilarity, Pair
from autograder.similarity.fingerprints import fingerprint, matched_spans

SIDE_BY_SIDE = 50  # listed pairs per notebook shown side by side (each re-fingerprints its two answers)
STYLE = (
    "body{font-family:sans-serif;margin:2em} table{border-collapse:collapse} td,th{border:1px solid #ccc;"
    "padding:4px 8px;vertical-align:top} pre{margin:0;white-space:pre-wrap;font-size:12px} mark{background:#ffe08a}"
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


def side_by_side(pair: Pair, answers: dict[str, dict[str, str]], boilerplate: frozenset[int]) -> str:
    rows = []
    for part, (score, z) in pair.exercises.items():
        # As written (not canonical), so that the highlighted spans fall on the students' own code.
        first = fingerprint(answers[pair.first].get(part, ""), boilerplate, structural=False)
        second = fingerprint(answers[pair.second].get(part, ""), boilerplate, structural=False)
        left, right = matched_spans(first, second)
        rows.append(
            f"<tr><th colspan=2>{html.escape(part)}: score {score:.2f}, z {z:+.1f}</th></tr>"
            f"<tr><td><pre>{highlighted(first.code, left)}</pre></td>"
            f"<td><pre>{highlighted(second.code, right)}</pre></td></tr>"
        )
    header = f"<tr><th>{html.escape(pair.first)}</th><th>{html.escape(pair.second)}</th></tr>"
    return f"<table style='width:100%'>{header}{''.join(rows)}</table>"


def pair_table(pairs: list[Pair]) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(p.first)}</td><td>{html.escape(p.second)}</td><td>{p.z:+.1f}</td><td>{p.score:.2f}</td>"
        f"<td>{p.shared_failures} ({p.failure_evidence:.1f})</td>"
        f"<td>{', '.join(f'{html.escape(k)} {s:.2f} ({z:+.1f})' for k, (s, z) in p.exercises.items())}</td></tr>"
        for p in pairs
    )
    return ("<table><tr><th>student</th><th>student</th><th>notebook z</th><th>notebook score</th>"
            f"<th>shared failures (evidence)</th><th>exercises: score (z)</th></tr>{rows}</table>")  # fmt: skip


def assignment_section(result: AssignmentSimilarity, work: ClassWork, boilerplate: frozenset[int]) -> list[str]:
    answers = {submission.student: submission.answers for submission in work.submissions}
    listed = result.listed()
    counts = f"{len(result.students)} submissions, {len(result)} pairs, {len(listed)} listed."
    if len(listed) > SIDE_BY_SIDE:
        counts += f" The first {SIDE_BY_SIDE} listed pairs are shown side by side below; the table holds them all."
    parts = [f"<h2>{html.escape(result.assignment)}</h2>", f"<p>{counts}</p>"]
    if not result.can_tell:
        parts.append(
            f"<p class='cannot-tell'><strong>Too short or too alike to tell:</strong> even two identical notebooks "
            f"whose answers nobody else wrote reach only z {result.ceiling_z:+.1f} here (a pair is listed from "
            f"{LISTED_Z}), so a high rank in this notebook means little. Only pairs within "
            f"{1 - CEILING_SHARE:.0%} of that ceiling (identical answers almost nobody else wrote) are listed.</p>"
        )
    if listed:
        parts.append(pair_table(listed))
    sharing = result.sharing_failures()
    if sharing:
        parts += ["<h3>Pairs that fail the same tests the same way</h3>",
                  "<p>The grader's failed tests with the same message, each weighed by how few students share it "
                  "(log n / holders); correct answers share nothing here. Shown beside the text's scores, "
                  "not mixed into them.</p>", pair_table(sharing)]  # fmt: skip
    copies = "".join(
        f"<li>{html.escape(c.student)}: {html.escape(c.exercise)} ({c.same} students hand in the same)</li>"
        for c in result.reference_copies
    )
    if copies:
        parts += ["<h3>Answers identical to the reference solution</h3>", f"<ul>{copies}</ul>"]
    if result.unreadable:
        items = "".join(f"<li>{html.escape(s)}: {html.escape(why)}</li>" for s, why in result.unreadable.items())
        parts += ["<h3>Not compared (unreadable)</h3>", f"<ul>{items}</ul>"]
    shown = listed[:SIDE_BY_SIDE]
    for rank, pair in enumerate(shown, 1):
        parts += [f"<h3>{rank}. {html.escape(pair.first)} and {html.escape(pair.second)}: z {pair.z:+.1f}</h3>",
                  side_by_side(pair, answers, boilerplate)]  # fmt: skip
    return parts


def write_page(sections: list[list[str]], output: Path) -> Path:
    parts = [f"<html><head><meta charset='utf-8'><title>Similarity report</title><style>{STYLE}</style></head><body>",
             "<h1>Similarity report</h1>",
             "<p>This page ranks; it does not decide. A pair is listed when its notebook z-score (how far its "
             f"closeness lies above the class's other pairs, in robust standard deviations) reaches {LISTED_Z}, "
             f"or when it is among the {TOP_LISTED} highest pairs of its notebook (above the median), whatever "
             "its z-score: the top of a class is always worth a look, an outlier or not. "
             "Short exercises have one natural answer: read the code before drawing a conclusion. A notebook "
             "whose answers are too short or too alike to tell a copy from common work says so. Beside the "
             "code's scores, <em>shared failures</em> counts the hidden tests both fail with the same message, "
             "weighed by how few students fail them so (correct answers share nothing there).</p>"]  # fmt: skip
    for section in sections:
        parts += section
    parts.append("</body></html>")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(parts), encoding="utf-8")
    return output
