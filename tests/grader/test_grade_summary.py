"""``grade``'s printed summary: no wall of ``missing`` rows for notebooks nobody has handed in yet, and the files
of a hand-in it took under a copy's name or ignored."""

from autograder.cli import grade_summary
from autograder.pipeline.storage.results import Status, SubmissionResult


def test_missing_rows_only_for_assignments_someone_handed_in() -> None:
    students = [f"student{i:02d}" for i in range(7)]
    results = [SubmissionResult("01_attention", s, Status.GRADED, seconds=9.0) for s in students[:5]]
    results.append(SubmissionResult("01_attention", students[5], Status.TIMED_OUT, "ran past 900 s"))
    results.append(SubmissionResult("01_attention", students[6], Status.MISSING, "nothing submitted"))
    later = [f"{n:02d}_later" for n in range(2, 17)]  # 15 notebooks nobody has handed in yet
    results += [SubmissionResult(a, s, Status.MISSING, "nothing submitted") for a in later for s in students]

    lines = grade_summary(results, handed_in={"01_attention"})

    rows = [line for line in lines if line.startswith("01_attention")]
    assert len(rows) == 7, lines  # every student of the handed-in notebook, the missing one included
    assert any(students[6] in row and "missing" in row for row in rows)
    assert not any("_later" in line for line in lines), lines
    assert "105 missing submissions not listed, of 15 assignments nobody handed in" in lines
    assert lines[-1] == "6 graded in this run; 2 need a look (see export / report)"
    assert len(lines) == 9


def test_nothing_missing_adds_no_count_line() -> None:
    lines = grade_summary([SubmissionResult("01_attention", "ann", Status.GRADED)], handed_in={"01_attention"})
    assert len(lines) == 2 and "not listed" not in "\n".join(lines)


def test_a_notebook_taken_under_a_copy_s_name_and_the_files_ignored_are_said_under_the_row() -> None:
    took, ignored = "took '01_attention (1).ipynb' as 01_attention.ipynb", "ignored '01_attention_old.ipynb' (why)"
    results = [SubmissionResult("01_attention", "alice", Status.GRADED, files=[took, ignored]),
               SubmissionResult("01_attention", "bob", Status.GRADED)]
    lines = grade_summary(results, handed_in={"01_attention"})
    assert lines[1:3] == [f"  alice: {took}", f"  alice: {ignored}"] and lines[3].startswith("01_attention     bob")
