"""A new notebook's files, in every place the course needs them:

    python -m book.scaffold 08_name "Title"      (make scaffold NOTEBOOK=08_name TITLE="Title")

Each step of :data:`STEPS` writes one place; ``docs/maintainers.md``'s checklist for adding a notebook is
:func:`checklist`, the same steps in words (``tests/test_scaffold.py`` fails when the two drift). The new
source notebook holds one TODO, with a visible and a hidden test, in the course's form: the notebook's own
exercise replaces it, and :data:`BY_HAND` says what is left to do.
"""

import argparse
import copy
import csv
import json
import logging
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course import settings
from book.syllabus import GENERATED
from editions.messages import hidden_messages_of, notebook_messages, update
from editions.release import write_release
from editions.translations import dump
from tfcourse.registry import CATALOGS, translated

log = logging.getLogger("book.scaffold")
MAINTAINERS = settings.REPO_ROOT / "docs" / "maintainers.md"
NAME = re.compile(r"^(?P<number>\d\d)_(?P<exercise>[a-z][a-z0-9_]*)$")


@dataclass(frozen=True)
class Notebook:
    name: str  # 08_name
    title: str
    root: Path

    @property
    def exercise(self) -> str:
        """The TODO's function name and answer cell's grade id (its test cells' are ``<exercise>_<property>``)."""
        return NAME.match(self.name)["exercise"]


def markdown(text: str) -> NotebookNode:
    return nbformat.v4.new_markdown_cell(text, id=uuid.uuid4().hex[:8])


def code(text: str, grade_id: str = "", points: int = 0) -> NotebookNode:
    cell = nbformat.v4.new_code_cell(text, id=grade_id or uuid.uuid4().hex[:8])
    if grade_id:
        answer = not points
        cell.metadata["nbgrader"] = {"grade": not answer, "grade_id": grade_id, "locked": not answer,
                                     "schema_version": 3, "solution": answer, "task": False}  # fmt: skip
        if points:
            cell.metadata["nbgrader"]["points"] = points
    return cell


def write_source(notebook: Notebook) -> None:
    """The first notebook's setup (its heading and first code cell, so every notebook starts alike), then one TODO."""
    first = nbformat.read(settings.source_notebook(settings.assignment_ids(notebook.root)[0], notebook.root), 4)
    setup = next(index for index, cell in enumerate(first.cells) if cell.cell_type == "code")
    name, number = notebook.exercise, notebook.name[:2]
    source = nbformat.v4.new_notebook(metadata=copy.deepcopy(first.metadata))
    source.cells = [
        markdown(f"# {number} · {notebook.title}\n\nWhat this notebook teaches, and why it comes here."),
        *copy.deepcopy(first.cells[setup - 1 : setup + 1]),
        markdown(f"## 1. Exercise\n\n### TODO 1 — `{name}(x)`\n\nReturn `x` doubled (the notebook's own exercise "
                 "replaces this one)."),  # fmt: skip
        code(f"def {name}(x: torch.Tensor) -> torch.Tensor:\n    ### BEGIN SOLUTION\n    return 2 * x\n"
             "    ### END SOLUTION", name),  # fmt: skip
        markdown("The test cell below is graded. Run it after every change to your function."),
        code(f'check_close("{name} of a vector", {name}(torch.arange(3.0)), torch.tensor([0.0, 2.0, 4.0]))\n'
             f'print(passed("{name}"))\n### BEGIN HIDDEN TESTS\n'
             f'check_close("{name} of a matrix", {name}(torch.ones(2, 2)), torch.full((2, 2), 2.0))\n'
             "### END HIDDEN TESTS", f"{name}_values", points=1),  # fmt: skip
        markdown("## Summary\n\n* What the notebook taught."),
    ]
    path = settings.source_notebook(notebook.name, notebook.root)
    path.parent.mkdir(parents=True)
    nbformat.write(source, path)


def add_due_date(notebook: Notebook) -> None:
    with (notebook.root / "due_dates.csv").open("a", newline="") as file:
        csv.writer(file, lineterminator="\n").writerow([notebook.name, ""])


def add_to_plans(notebook: Notebook) -> None:
    path = notebook.root / "book" / "plans.json"
    plans = json.loads(path.read_text())
    for weeks in plans.values():
        weeks.append([notebook.name[:2]])
    path.write_text(json.dumps(plans, indent=2).replace("[\n      ", "[").replace('",\n      "', '", "') + "\n")


def release(notebook: Notebook) -> None:
    nbgrader = [sys.executable, "-m", "nbgrader", "generate_assignment", notebook.name, "--force"]
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # nbgrader runs alembic by name
    subprocess.run(nbgrader, cwd=notebook.root, check=True, timeout=600, env=os.environ | {"PATH": path})
    for language in translated():
        write_release(language, notebook.root)


def add_translation_files(notebook: Notebook) -> None:
    for language in translated():
        dump(language, notebook.name, {})


def add_catalogs(notebook: Notebook) -> None:
    tfcourse_locale, hidden_locale = (notebook.root / folder for folder in CATALOGS[:2])
    for language in translated():
        update(language, notebook.name, notebook_messages(notebook.name, notebook.root), tfcourse_locale)
        update(language, notebook.name, hidden_messages_of(notebook.name, notebook.root), hidden_locale)


def measure(notebook: Notebook) -> None:
    script = notebook.root / "classroom" / "k8s" / "measure_peak_memory.py"
    subprocess.run([sys.executable, str(script), notebook.name], cwd=notebook.root, check=True, timeout=600)


def rewrite_syllabus(notebook: Notebook) -> None:
    script = notebook.root / "book" / "syllabus.py"
    subprocess.run([sys.executable, str(script)], cwd=notebook.root, check=True, timeout=600)


@dataclass(frozen=True)
class Step:
    places: str  # where it writes; {name}: the notebook, {code}: each translated edition
    what: str
    run: Callable[[Notebook], None]


STEPS = (
    Step(
        "`solutions/{name}/{name}.ipynb`",
        "the source: the first notebook's setup cell, one TODO (answer cell `<exercise>`), its graded test cell "
        "`<exercise>_values` with a hidden test",
        write_source,
    ),
    Step("`due_dates.csv`", "a row for the notebook, with no due date", add_due_date),
    Step("`book/plans.json`", "a week of its own at the end of each suggested plan", add_to_plans),
    Step("`notebooks/{name}/`, `notebooks_{code}/{name}/`", "the student releases (`make release`)", release),
    Step("`editions/{code}/{name}.yaml`", "each translated edition's translation file, empty", add_translation_files),
    Step(
        "`tfcourse/locale/{code}/{name}.po`, `autograder/locale/{code}/{name}.po`",
        "the message catalogs of its printouts and of its hidden tests (`python -m editions messages CODE`)",
        add_catalogs,
    ),
    Step("`classroom/k8s/peak_memory.json`", "its full-mode run, measured (`measure_peak_memory.py`)", measure),
    Step("`docs/syllabus.md`, `docs/syllabus.{code}.md`", "the syllabus's points, hours, plans", rewrite_syllabus),
)
BY_HAND = (
    "write the notebook's own prose, exercises and tests in the source, then run the steps from the release on "
    "again (`make release`, `python -m editions messages CODE`, `classroom/k8s/measure_peak_memory.py NN_name`, "
    "`make syllabus`)",
    "add `tests/variants/<exercise>.py`, with `ASSIGNMENT = \"NN_name\"`, the exercise's mutants and alternatives",
    "translate: `python -m editions todo CODE NN_name` lists the cells, `python -m editions messages CODE` counts "
    "the messages left",
    "give each suggested plan of `book/plans.json` the weeks it should have, and its name on the syllabus pages",
)


def checklist() -> str:
    """The steps in words, as ``docs/maintainers.md`` lists them."""
    done = [f"{n}. {step.places.format(name='NN_name', code='CODE')}: {step.what}."
            for n, step in enumerate(STEPS, start=1)]  # fmt: skip
    left = [f"- {task[0].upper()}{task[1:]}." for task in BY_HAND]
    head = '`python -m book.scaffold NN_name "Title"` writes:'
    return "\n".join([head, "", *done, "", "Then, by hand:", "", *left])


def with_checklist(text: str) -> str:
    """``text`` (``docs/maintainers.md``) with its generated ``scaffold`` part rewritten from :func:`checklist`."""
    return GENERATED.sub(
        lambda part: f"{part[1]}{checklist()}\n{part[4]}" if part["name"] == "scaffold" else part[0], text
    )


def scaffold(name: str, title: str, root: Path = settings.REPO_ROOT) -> Notebook:
    if not NAME.match(name):
        raise ValueError(f"{name!r}: a notebook is named NN_name (two digits, then lower case)")
    if name in settings.assignment_ids(root):
        raise ValueError(f"{name} exists already")
    notebook = Notebook(name, title, root)
    for step in STEPS:
        log.info("%s: %s", step.places.format(name=name, code="|".join(translated())), step.what)
        step.run(notebook)
    return notebook


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m book.scaffold", description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", help="NN_name, e.g. 08_sampling")
    parser.add_argument("title", nargs="?", help="its title, e.g. 'Sampling from a language model'")
    parser.add_argument("--checklist", action="store_true", help="only rewrite docs/maintainers.md's checklist")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.checklist:
        MAINTAINERS.write_text(with_checklist(MAINTAINERS.read_text()))
    elif args.name and args.title:
        scaffold(args.name, args.title)
    else:
        parser.error("name and title, or --checklist")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
