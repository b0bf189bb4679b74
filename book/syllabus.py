"""The syllabus's generated parts, read from the notebooks so that they cannot drift.

    python book/syllabus.py            # rewrite the generated parts of docs/syllabus.md and docs/syllabus.zh.md
    python book/syllabus.py --check    # change nothing; exit 1 naming each part that differs

``make syllabus`` runs the first. Each page is hand-written prose around parts this script writes,
each between ``<!-- generated: NAME -->`` and ``<!-- end generated -->``:

- ``points``: per notebook, the points of its autograded tests, of its written (manually graded)
  answers and of its extra-credit tests (grade ids ``extra_credit_*``, on top of full marks, as
  ``export`` counts them), from nbgrader's cell metadata in ``solutions/``;
- ``hours``: what the estimate of each notebook's hours is computed from (words of prose, lines of
  given code, exercises and the lines of their reference answers, written questions and the words
  of their model answers, the measured full-mode run) and the estimate, by the rates below;
- ``questions``: the written questions (grade id, points) that the marking guide covers;
- ``schedule``: two plans with each week's hours, and a ``due_dates.csv`` for each.

The rates are assumptions, stated on the pages; the run times are measured
(``classroom/k8s/peak_memory.json``, written by ``classroom/k8s/measure_peak_memory.py``).
"""

import argparse
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import nbformat
from nbformat import NotebookNode

if not __package__:  # run as `python book/syllabus.py`: the repository's own packages first
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder.course import settings
from autograder.course.notebooks import (
    grade_id,
    is_answer_cell,
    is_extra_credit,
    is_graded_test_cell,
    is_student_cell,
    nbgrader_meta,
    solution_code,
)
from editions.release import edition_notebook
from editions.translations import interface
from tfcourse import hosted
from tfcourse.registry import editions, source, translated

REPO_ROOT = settings.REPO_ROOT
PAGES = {code: REPO_ROOT / edition.syllabus for code, edition in editions().items()}
RUN_TIMES = REPO_ROOT / "classroom" / "k8s" / "peak_memory.json"
GENERATED = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)
QUESTION_NUMBER = re.compile(r"\*\*Q(\d+)\b")

# The rates of the estimate, each as (fast, slow): the fast one gives the low end of a range, the slow
# one the high end. They are assumptions, not measurements of students.
READING_WORDS_PER_MINUTE = (200, 100)  # prose and maths; 200 is Carver's (1992) "learning" rate
GIVEN_CODE_LINES_PER_MINUTE = (10, 5)  # the notebook's own code cells, read and run
MINUTES_PER_EXERCISE = (10, 20)  # reading a TODO's contract and hints, running its tests
MINUTES_PER_ANSWER_LINE = (1.5, 3)  # per line of the reference answer (not blank, not a comment)
MINUTES_PER_QUESTION = (5, 10)  # thinking before writing
WRITING_WORDS_PER_MINUTE = (20, 10)  # against the length of the model answer

# The suggested plans (book/plans.json): the notebooks of each week, by number.
PLANS_FILE = REPO_ROOT / "book" / "plans.json"
# The example due_dates.csv: a class whose first week starts on this Monday; each week's notebooks
# are due on its Sunday at 23:59 in UTC+08:00.
EXAMPLE_START = date(2027, 3, 1)
EXAMPLE_DUE_TIME = "T23:59:00+08:00"


@dataclass(frozen=True)
class Question:
    """A written (manually graded) question: its number in the notebook, its answer cell's grade id, its points."""

    number: int
    grade_id: str
    points: float
    model_answer_words: int


@dataclass(frozen=True)
class Notebook:
    """What the syllabus says of one notebook, read from its source notebook and its measured run."""

    assignment: str
    titles: dict[str, str]
    autograded: float
    written: float
    extra_credit: float
    prose_words: int
    given_code_lines: int
    exercises: int
    answer_lines: int
    extra_exercises: int
    extra_answer_lines: int
    questions: tuple[Question, ...]
    run_seconds: float

    @property
    def number(self) -> str:
        return self.assignment[:2]


def code_lines(source: str) -> int:
    """Lines that are neither blank nor a comment."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def answer_lines(cell: NotebookNode) -> int:
    """The lines of a reference answer: its code between nbgrader's solution markers."""
    return code_lines(solution_code(cell.source))


def title(notebook_path: Path) -> str:
    """A notebook's title: its first heading, without the number (``# 01 · Attention`` -> ``Attention``); the
    links cell above it has none."""
    cells = nbformat.read(notebook_path, as_version=4).cells
    heading = next(cell.source for cell in cells if cell.source.lstrip().startswith("# ")).splitlines()[0]
    return heading.lstrip("# ").split("·", 1)[-1].strip()


def question_number(cells: list[NotebookNode], index: int) -> int:
    """The number of the written question whose answer cell is ``cells[index]``: the last ``**Qn`` above it."""
    for cell in reversed(cells[:index]):
        numbers = QUESTION_NUMBER.findall(cell.source) if cell.cell_type == "markdown" else []
        if numbers:
            return int(numbers[-1])
    raise ValueError(f"no **Qn question above the written answer {grade_id(cells[index])}")


def measured_runs() -> dict:
    """The full-mode runs of ``classroom/k8s/measure_peak_memory.py``: the machine and each notebook's run."""
    return json.loads(RUN_TIMES.read_text())


def points(cell: NotebookNode) -> float:
    return float(nbgrader_meta(cell).get("points", 0))


def read_notebook(assignment: str) -> Notebook:
    # the links and the setup cell the release writes (tfcourse/hosted.py) are no reading and no exercise
    cells = [cell for cell in nbformat.read(settings.source_notebook(assignment), as_version=4).cells
             if cell.get("id") not in hosted.RELEASE_CELL_IDS]
    graded = [cell for cell in cells if nbgrader_meta(cell).get("grade")]
    core = [cell for cell in cells if is_answer_cell(cell) and not is_extra_credit(grade_id(cell))]
    extra = [cell for cell in cells if is_answer_cell(cell) and is_extra_credit(grade_id(cell))]
    questions = tuple(
        Question(question_number(cells, index), grade_id(cell), points(cell), len(cell.source.split()))
        for index, cell in enumerate(cells)
        if nbgrader_meta(cell).get("grade") and is_student_cell(cell)
    )
    return Notebook(
        assignment=assignment,
        titles={
            source(): title(settings.source_notebook(assignment)),
            **{code: title(edition_notebook(code, assignment)) for code in translated()},
        },
        autograded=sum(points(c) for c in graded if is_graded_test_cell(c) and not is_extra_credit(grade_id(c))),
        written=sum(points(c) for c in graded if is_student_cell(c) and not is_extra_credit(grade_id(c))),
        extra_credit=sum(points(c) for c in graded if is_extra_credit(grade_id(c))),
        prose_words=sum(len(c.source.split()) for c in cells if c.cell_type == "markdown" and not is_student_cell(c)),
        given_code_lines=sum(
            code_lines(c.source)
            for c in cells
            if c.cell_type == "code" and not nbgrader_meta(c).get("solution") and not nbgrader_meta(c).get("grade")
        ),
        exercises=len(core),
        answer_lines=sum(answer_lines(cell) for cell in core),
        extra_exercises=len(extra),
        extra_answer_lines=sum(answer_lines(cell) for cell in extra),
        questions=questions,
        run_seconds=measured_runs()["notebooks"][assignment]["wall_s"],
    )


def course() -> list[Notebook]:
    return [read_notebook(assignment) for assignment in settings.assignment_ids()]


# --- the estimate -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Minutes:
    """A range of whole minutes."""

    low: int
    high: int

    def __add__(self, other: "Minutes") -> "Minutes":
        return Minutes(self.low + other.low, self.high + other.high)


def minutes(low: float, high: float) -> Minutes:
    return Minutes(round(low), round(high))


@dataclass(frozen=True)
class Estimate:
    """A notebook's time, per part, in minutes, and the core total in hours (half hours, rounded outwards)."""

    reading: Minutes
    given_code: Minutes
    exercises: Minutes
    questions: Minutes
    run: Minutes
    extra_credit: Minutes

    @property
    def parts(self) -> list[Minutes]:
        return [self.reading, self.given_code, self.exercises, self.questions, self.run]

    @property
    def hours(self) -> tuple[float, float]:
        """The core total in hours, the low end rounded down and the high end up to a half hour."""
        total = sum(self.parts, Minutes(0, 0))
        return math.floor(total.low / 30) / 2, math.ceil(total.high / 30) / 2


def exercise_minutes(exercises: int, lines: int) -> Minutes:
    return minutes(
        *(
            exercises * base + lines * per_line
            for base, per_line in zip(MINUTES_PER_EXERCISE, MINUTES_PER_ANSWER_LINE, strict=True)
        )
    )


def estimate(notebook: Notebook) -> Estimate:
    words = sum(question.model_answer_words for question in notebook.questions)
    count = len(notebook.questions)
    return Estimate(
        reading=minutes(*(notebook.prose_words / rate for rate in READING_WORDS_PER_MINUTE)),
        given_code=minutes(*(notebook.given_code_lines / rate for rate in GIVEN_CODE_LINES_PER_MINUTE)),
        exercises=exercise_minutes(notebook.exercises, notebook.answer_lines),
        questions=minutes(
            *(
                count * base + words / rate
                for base, rate in zip(MINUTES_PER_QUESTION, WRITING_WORDS_PER_MINUTE, strict=True)
            )
        ),
        run=minutes(notebook.run_seconds / 60, notebook.run_seconds / 60),
        extra_credit=exercise_minutes(notebook.extra_exercises, notebook.extra_answer_lines),
    )


# --- the pages' words ---------------------------------------------------------------------------------------


def labels(language: str) -> dict:
    """The pages' words in ``language`` (``editions/<code>/interface.yaml``)."""
    return interface(language)["syllabus"]


def number(value: float) -> str:
    """A count as the pages write it: ``8,171``, ``2``, ``1.5``."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"


def span(low: float, high: float) -> str:
    return number(low) if low == high else f"{number(low)}-{number(high)}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(row) + " |" for row in lines) + "\n"


def notebook_cell(notebook: Notebook, language: str) -> str:
    return f"`{notebook.assignment}` {notebook.titles[language]}"


def points_part(notebooks: list[Notebook], language: str) -> str:
    words = labels(language)
    rows = [
        [
            notebook_cell(n, language),
            number(n.autograded),
            number(n.written),
            number(n.extra_credit),
            number(n.autograded + n.written),
        ]
        for n in notebooks
    ]
    total = [sum(getattr(n, name) for n in notebooks) for name in ("autograded", "written", "extra_credit")]
    rows.append(
        [f"**{words['course']}**", *(f"**{number(value)}**" for value in total), f"**{number(total[0] + total[1])}**"]
    )
    return table([words[key] for key in ("notebook", "autograded", "written", "extra", "total")], rows)


def hours_part(notebooks: list[Notebook], language: str) -> str:
    words = labels(language)
    inputs = table(
        [words[key] for key in ("notebook", "words", "code", "exercises", "answer_lines", "questions", "answer_words",
                                "run")],
        [
            [
                f"`{n.assignment}`",
                number(n.prose_words),
                number(n.given_code_lines),
                f"{n.exercises} (+{n.extra_exercises})" if n.extra_exercises else str(n.exercises),
                f"{number(n.answer_lines)} (+{n.extra_answer_lines})" if n.extra_exercises else number(n.answer_lines),
                str(len(n.questions)),
                number(sum(q.model_answer_words for q in n.questions)),
                words["minutes"].format(number(round(n.run_seconds / 60, 1))),
            ]
            for n in notebooks
        ],
    )
    estimates = [estimate(n) for n in notebooks]
    rows = [
        [
            f"`{n.assignment}`",
            *(span(part.low, part.high) for part in e.parts),
            f"**{words['hours_unit'].format(span(*e.hours))}**",
            words["minutes"].format(span(e.extra_credit.low, e.extra_credit.high)) if n.extra_exercises else "",
        ]
        for n, e in zip(notebooks, estimates, strict=True)
    ]
    low, high = sum(e.hours[0] for e in estimates), sum(e.hours[1] for e in estimates)
    extra = sum((e.extra_credit for e in estimates), Minutes(0, 0))
    total = f"**{words['hours_unit'].format(span(low, high))}**"
    rows.append([f"**{words['course']}**", *[""] * 5, total, words["minutes"].format(span(extra.low, extra.high))])
    header = [words[key] for key in ("notebook", "reading", "given_code", "exercise_minutes", "writing", "run_minutes",
                                     "hours", "extra_minutes")]
    return f"{inputs}\n{table(header, rows)}\n{rates_part(language)}\n{words['rounding']}\n\n{run_note(language)}\n"


def rates_part(language: str) -> str:
    """The rates of the estimate, as a table: each part's rule at the low end and at the high end of a range."""
    words = labels(language)
    rates = (
        (READING_WORDS_PER_MINUTE,),
        (GIVEN_CODE_LINES_PER_MINUTE,),
        (MINUTES_PER_EXERCISE, MINUTES_PER_ANSWER_LINE),
        (MINUTES_PER_QUESTION, WRITING_WORDS_PER_MINUTE),
    )
    rows = [
        [part, *(rule.format(*(number(pair[end]) for pair in pairs)) for end in (0, 1))]
        for (part, rule), pairs in zip(words["rate_rows"], rates, strict=True)
    ]
    part, rule = words["rate_run"]
    return table([words["rate"], words["low_end"], words["high_end"]], [*rows, [part, rule, rule]])


def run_note(language: str) -> str:
    measured = measured_runs()
    runs = [measured["notebooks"][assignment] for assignment in settings.assignment_ids()]
    loads = [run[key][0] for run in runs for key in ("load_before", "load_after")]
    dates = sorted({run["date"] for run in runs})
    return labels(language)["run_note"].format(
        dates=", ".join(dates),
        cpus=measured["machine"]["cpus"],
        cpu=measured["machine"]["cpu_model"],
        load_low=min(loads),
        load_high=max(loads),
    )


def questions_part(notebooks: list[Notebook], language: str) -> str:
    words = labels(language)
    rows = [
        [notebook_cell(n, language), f"Q{q.number}", f"`{q.grade_id}`", number(q.points)]
        for n in notebooks
        for q in n.questions
    ]
    return table([words["notebook"], words["question"], words["grade_id"], words["points"]], rows)


def plan_weeks(plan: list[list[str]], notebooks: list[Notebook]) -> list[list[Notebook]]:
    """The notebooks of each week; a plan that leaves a notebook out or names one twice is an error."""
    by_number = {n.number: n for n in notebooks}
    named = [number for week in plan for number in week]
    if sorted(named) != sorted(by_number):
        raise ValueError(f"a plan must name every notebook once: {named} against {sorted(by_number)}")
    return [[by_number[number] for number in week] for week in plan]


def schedule_part(notebooks: list[Notebook], language: str) -> str:
    words = labels(language)
    parts = []
    for name, plan in json.loads(PLANS_FILE.read_text()).items():
        weeks = plan_weeks(plan, notebooks)
        rows = []
        for week, chosen in enumerate(weeks, start=1):
            low = sum(estimate(n).hours[0] for n in chosen)
            high = sum(estimate(n).hours[1] for n in chosen)
            rows.append(
                [
                    str(week),
                    ", ".join(f"`{n.assignment}`" for n in chosen),
                    words["hours_unit"].format(span(low, high)),
                    due(week)[:10],
                ]
            )
        csv = "\n".join(
            [
                "assignment,due",
                *(f"{n.assignment},{due(week)}" for week, chosen in enumerate(weeks, start=1) for n in chosen),
            ]
        )
        parts.append(
            f"**{words['plan'][name]}**\n\n"
            + table([words["week"], words["notebook"], words["hours"], words["due"]], rows)
            + f"\n{words['csv'].format(start=EXAMPLE_START.isoformat())}\n\n```csv\n{csv}\n```\n"
        )
    return "\n".join(parts)


def due(week: int) -> str:
    """The example due date of a week's notebooks: that week's Sunday, 23:59 in UTC+08:00."""
    return (EXAMPLE_START + timedelta(days=7 * week - 1)).isoformat() + EXAMPLE_DUE_TIME


PARTS = {"points": points_part, "hours": hours_part, "questions": questions_part, "schedule": schedule_part}


# --- the pages ----------------------------------------------------------------------------------------------


def generated(text: str, notebooks: list[Notebook], language: str) -> str:
    """``text`` with each generated part rewritten; a page without every part, or with another one, is an error."""

    def rewrite(match: re.Match) -> str:
        return match.group(1) + PARTS[match["name"]](notebooks, language) + match.group(4)

    found = {match["name"] for match in GENERATED.finditer(text)}
    if found != set(PARTS):
        raise ValueError(f"the page's generated parts are {sorted(found)}, not {sorted(PARTS)}")
    return GENERATED.sub(rewrite, text)


def differences(text: str, notebooks: list[Notebook], language: str) -> list[str]:
    """The generated parts of ``text`` that differ from what this script would write."""
    expected = {match["name"]: match["body"] for match in GENERATED.finditer(generated(text, notebooks, language))}
    return [match["name"] for match in GENERATED.finditer(text) if match["body"] != expected[match["name"]]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a page is out of date")
    args = parser.parse_args(argv)
    notebooks = course()
    stale = []
    for language, page in PAGES.items():
        text = page.read_text()
        if args.check:
            stale += [f"{os.path.relpath(page, REPO_ROOT)}: {name}" for name in differences(text, notebooks, language)]
        else:
            page.write_text(generated(text, notebooks, language))
            print(f"wrote the generated parts of {os.path.relpath(page, REPO_ROOT)}")
    if stale:
        print("out of date (run `make syllabus`):\n  " + "\n  ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
