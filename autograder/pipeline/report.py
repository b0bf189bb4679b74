"""``report``: the class at a glance, as one self-contained HTML page (figures inlined as PNG)."""

import base64
import html
import io
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from autograder.course.course import Course  # noqa: E402
from autograder.pipeline.results import SubmissionResult, load_results  # noqa: E402


def figure_html(figure: plt.Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return f"<img src='data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}'>"


def test_frame(results: list[SubmissionResult]) -> pd.DataFrame:
    """One row per (student, test) of the graded submissions: did it pass, and with which message."""
    rows = [
        {
            "assignment": r.assignment,
            "notebook": t.notebook,
            "student": r.student,
            "test": t.grade_id,
            "failed": t.score < t.max_score,
            "message": t.message.splitlines()[0] if t.message else "",
        }  # fmt: skip
        for r in results
        for t in r.tests
        if r.tests and str(r.status) in {"graded", "flagged"}
    ]
    return pd.DataFrame(rows, columns=["assignment", "notebook", "student", "test", "failed", "message"])


def score_histograms(results: list[SubmissionResult]) -> plt.Figure:
    notebooks = sorted({(r.assignment) for r in results})
    figure, axes = plt.subplots(1, max(1, len(notebooks)), figsize=(4.5 * max(1, len(notebooks)), 3.2), squeeze=False)
    for axis, assignment in zip(axes[0], notebooks, strict=False):
        mine = [r for r in results if r.assignment == assignment]
        most = max((sum(t.max_score for t in r.tests) for r in mine), default=0)
        axis.hist([r.score for r in mine], bins=range(0, int(most) + 2), color="#4c72b0", edgecolor="white")
        axis.set(title=f"{assignment} (n={len(mine)})", xlabel=f"autograded score (of {most:g})", ylabel="students")
    figure.tight_layout()
    return figure


def failure_heatmap(tests: pd.DataFrame) -> plt.Figure:
    rates = tests.groupby(["assignment", "test"], sort=False)["failed"].mean().unstack("assignment")
    figure, axis = plt.subplots(figsize=(3 + 1.6 * rates.shape[1], 0.35 * len(rates) + 1.5))
    sns.heatmap(rates, annot=True, fmt=".0%", cmap="Reds", vmin=0, vmax=1, ax=axis, cbar_kws={"label": "failed"})
    axis.set(title="Share of students failing each test", xlabel="", ylabel="test cell")
    figure.tight_layout()
    return figure


def write_report(course: Course, output: Path, top: int = 15) -> Path:
    results = load_results(course)
    tests = test_frame(results)
    parts = ["<html><head><meta charset='utf-8'><title>Class report</title>",
             "<style>body{font-family:sans-serif;margin:2em} table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px}</style></head><body><h1>Class report</h1>"]  # fmt: skip
    statuses = pd.crosstab(pd.Series([r.assignment for r in results], name="assignment"),
                           pd.Series([str(r.status) for r in results], name="status"))  # fmt: skip
    parts += ["<h2>Submissions by status</h2>", statuses.to_html()]
    if results:
        parts += ["<h2>Autograded scores</h2>", figure_html(score_histograms(results))]
    if not tests.empty:
        parts += ["<h2>Which tests fail</h2>", figure_html(failure_heatmap(tests))]
        common = Counter(zip(tests.loc[tests.failed, "test"], tests.loc[tests.failed, "message"], strict=True))
        rows = "".join(f"<tr><td>{count}</td><td><code>{html.escape(test)}</code></td><td>{html.escape(msg)}</td></tr>"
                       for (test, msg), count in common.most_common(top))  # fmt: skip
        parts += ["<h2>Most common failure messages</h2>",
                  f"<table><tr><th>students</th><th>test</th><th>message</th></tr>{rows}</table>"]  # fmt: skip
    flagged = [r for r in results if r.flags or str(r.status) not in {"graded"}]
    if flagged:
        rows = "".join(f"<tr><td>{html.escape(r.student)}</td><td>{r.assignment}</td><td>{r.status}</td>"
                       f"<td>{html.escape(r.reason)}<br>{'<br>'.join(html.escape(f) for f in r.flags[:10])}</td></tr>"
                       for r in flagged)  # fmt: skip
        header = "<tr><th>student</th><th>assignment</th><th>status</th><th>why</th></tr>"
        parts += ["<h2>Submissions to look at</h2>", f"<table>{header}{rows}</table>"]
    parts.append("</body></html>")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(parts))
    return output
