"""Graded the same in either edition (COURSE_SPEC section 8), on 01 only: a real grading run is costly.

The Chinese notebook is made in the throw-away course from that course's English release, by the
same function as ``notebooks_zh/`` (its text: the committed translation of 01 over a five-cell
sample, tests/support/editions.py). Filled with the reference answers, it validates, scores full
marks under plain nbgrader and under ``python -m autograder grade``, exactly as the English one
does, and its feedback keeps the student's language; a wrong answer's failure comes in Chinese too, a
visible test's (the grader runs a Chinese submission's tests in the zh edition, tfcourse/messages.py) and a
hidden test's (autograder/course/hidden_messages.py), under both graders.
"""

import re
import time

import nbformat
import pytest
from nbgrader.validator import Validator

from autograder.cli import main
from autograder.course.notebooks import fill_answers, grade_id, reference_answers
from autograder.pipeline.commands.grade import GradeOptions, grade
from editions.release import translate
from testbed.nbgrader_course import autograde, generate, submit
from testbed.notebooks import read
from tests.conftest import TIMINGS
from tests.support.course import ThrowawayCourse
from tests.support.editions import LANGUAGE, SAMPLE_ASSIGNMENT, translations_with_sample
from tests.support.grading_seed import ONE_THREAD

pytestmark = pytest.mark.slow
ASSIGNMENT = SAMPLE_ASSIGNMENT
CHINESE = re.compile(r"[\u4e00-\u9fff]")


def submissions(course) -> dict:
    """Student -> notebook: the reference answers in each edition, and the untouched Chinese release."""
    release, source = read(course.release_notebook(ASSIGNMENT)), read(course.source_notebook(ASSIGNMENT))
    chinese = translate(release, source, translations_with_sample(ASSIGNMENT), LANGUAGE)
    answers = reference_answers(source)
    wrong = {  # a visible test catches the first mistake, only a hidden test the second
        **answers,
        "sdpa": answers["sdpa"].replace("softmax(dim=-1)", "softmax(dim=-2)"),
        "padding_mask": answers["padding_mask"].replace("token_ids != pad_idx", "token_ids != 0"),
    }
    assert all(wrong[name] != answers[name] for name in ("sdpa", "padding_mask"))
    return {
        "en": fill_answers(release, answers),
        "zh": fill_answers(chinese, answers),
        "zh_blank": chinese,
        "zh_wrong": fill_answers(chinese, wrong),
    }


def failure(notebook, wanted: str) -> str:
    """The error a graded test cell of an autograded notebook printed."""
    cell = next(c for c in notebook.cells if grade_id(c) == wanted)
    return "\n".join(f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error")


def chinese_cells(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "markdown" and CHINESE.search(cell.source)]


def test_plain_nbgrader_grades_both_editions_the_same(throwaway_course: ThrowawayCourse, tmp_path):
    course = throwaway_course(ASSIGNMENT, name="edition-nbgrader", release=False)
    api = generate(course, ASSIGNMENT)
    notebooks = submissions(course)
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    nbformat.write(notebooks["zh"], path)
    assert Validator().validate(str(path)) == {}, "the Chinese notebook with the reference answers fails validation"
    scores = {}
    for student, notebook in notebooks.items():
        submit(course, ASSIGNMENT, student, notebook)
        start = time.perf_counter()
        scores[student] = autograde(api, course, ASSIGNMENT, student)
        TIMINGS[f"edition: nbgrader autograde {student}"] = time.perf_counter() - start
    full = {name: cell.max_score for name, cell in scores["en"].items()}
    for student in ("en", "zh"):
        assert {name: cell.auto_score for name, cell in scores[student].items()} == full, student
    assert sum(cell.auto_score or 0 for cell in scores["zh_blank"].values()) == 0
    wrong = read(course.grading.autograded("zh_wrong", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb")
    assert scores["zh_wrong"]["padding_mask_values"].auto_score == 0
    hidden = failure(wrong, "padding_mask_values")
    assert CHINESE.search(hidden) and "hidden padding_mask" not in hidden, (
        f"a Chinese submission's failed hidden test should explain itself in Chinese, got: {hidden!r}"
    )
    autograded = read(course.grading.autograded("zh", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb")
    assert chinese_cells(autograded) == chinese_cells(notebooks["zh"]) != [], "autograde changed the Chinese prose"


def test_the_course_grader_grades_both_editions_the_same_and_answers_in_the_students_language(
    throwaway_course: ThrowawayCourse,
):
    course = throwaway_course(ASSIGNMENT, name="edition-grade", seeded=True)
    notebooks = submissions(course)
    for student in ("en", "zh", "zh_wrong"):
        submit(course, ASSIGNMENT, student, notebooks[student])
    start = time.perf_counter()
    one_set_of_zygotes = GradeOptions(jobs=1, limits=ONE_THREAD, progress=False)
    results = {r.student: r for r in grade(course, one_set_of_zygotes)}
    TIMINGS["edition: autograder grade en + zh"] = time.perf_counter() - start
    full = sum(test.max_score for test in results["en"].tests)
    assert results["en"].score == results["zh"].score == full, {s: (r.status, r.reason) for s, r in results.items()}
    assert [(t.grade_id, t.score) for t in results["en"].tests] == [(t.grade_id, t.score) for t in results["zh"].tests]
    wrong = {t.grade_id: t for t in results["zh_wrong"].tests}
    axis, hidden = wrong["sdpa_softmax_axis"], wrong["padding_mask_values"]
    assert axis.score == 0 and CHINESE.search(axis.message) and "sum to 1" not in axis.message, (
        f"a Chinese submission's failed test should explain itself in Chinese, got: {axis.message!r}"
    )
    assert hidden.score == 0 and hidden.clean_passed is False, hidden
    assert CHINESE.search(hidden.message) and "hidden padding_mask" not in hidden.message, (
        f"a Chinese submission's failed hidden test should explain itself in Chinese, got: {hidden.message!r}"
    )

    assert main(["--root", str(course.root), "feedback"]) == 0
    pages = {s: (course.grading.feedback(s, ASSIGNMENT) / f"{ASSIGNMENT}.html").read_text() for s in ("en", "zh")}
    assert "自动评分" in pages["zh"] and "Autograded score" not in pages["zh"]
    assert "Autograded score" in pages["en"] and not CHINESE.search(pages["en"])
    assert '<html lang="zh">' in pages["zh"] and '<html lang="en">' in pages["en"]
    assert "状态：</strong> 已评分" in pages["zh"] and "Status:</strong> graded" in pages["en"], "the status word"
    assert ":</strong>" not in pages["zh"] and "反馈：" in pages["zh"], "Chinese labels take the full-width colon"
    title = chinese_cells(notebooks["zh"])[0].splitlines()[0].lstrip("# ")
    assert title in pages["zh"], "the feedback lost the Chinese text of the student's notebook"
