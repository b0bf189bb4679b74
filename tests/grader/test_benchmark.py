"""The grader benchmark's plumbing, for every notebook (the timed run itself is `python -m autograder.benchmark`)."""

from pathlib import Path

import nbformat

from autograder import benchmark
from autograder.course.notebooks import grade_id, is_answer_cell, reference_answers
from autograder.course.settings import release_notebook, source_notebook


def test_the_benchmark_class_is_solved_blank_and_half_solved_in_turn(assignment: str, tmp_path: Path) -> None:
    course = benchmark.make_course(tmp_path, assignment, 3)
    assert (course.root / "nbgrader_config.py").is_file()
    answers = reference_answers(nbformat.read(source_notebook(assignment), 4))
    release = {grade_id(c): c.source for c in nbformat.read(release_notebook(assignment), 4).cells if is_answer_cell(c)}
    solved = []
    for index in range(3):
        path = course.grading.submitted(f"student{index:03d}", assignment) / f"{assignment}.ipynb"
        cells = {grade_id(c): c.source for c in nbformat.read(path, 4).cells if is_answer_cell(c)}
        assert set(cells) == set(release)
        solved.append(sum(cells[name] == answers[name] != release[name] for name in cells))
    assert solved == [len(release), 0, len(release) // 2]


def test_the_projection_adds_up_every_notebook_for_a_class_of_300(monkeypatch, capsys) -> None:
    seconds = {benchmark.PLAIN: 30.0, "grade --jobs 2": 10.0}  # per submission, whatever the notebook
    monkeypatch.setattr(benchmark, "graders", lambda assignment, jobs, workers: {name: name for name in seconds})
    table = ["header", "a row"]
    monkeypatch.setattr(benchmark, "timed", lambda run, assignment, count: (seconds[run] * count, table))
    rows = benchmark.main(["--submissions", "4", "--assignment", "a", "--assignment", "b", "--cluster-machines", "5"])
    assert rows == {"a": seconds, "b": seconds}
    out = capsys.readouterr().out
    assert "3.00x" in out  # 30 s against 10 s per submission
    assert "5.0 h on this machine" in out  # 300 students x 2 notebooks x 30 s
    assert "1.7 h on this machine, 0.3 h on a dask cluster of 5 such machines" in out  # 300 x 2 x 10 s
    assert out.count("header") == 1 and out.count("a row") == 2  # the phase table: one header, a row per notebook
