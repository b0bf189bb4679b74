"""A new notebook's files, in every place the course needs them:

    python -m book.scaffold 08_name "Title"      (make scaffold NOTEBOOK=08_name TITLE="Title")

Each step of :data:`STEPS` writes one place; ``docs/maintainers.md``'s checklist for adding a notebook is
:func:`checklist`, the same steps in words (``python -m book.scaffold --checklist`` writes it there).
"""

import argparse
import csv
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import nbformat

from autograder.course import settings
from book.syllabus import GENERATED
from editions.messages import hidden_messages_of, notebook_messages, update
from editions.release import write_release
from editions.translations import dump
from tfcourse import hosted
from tfcourse.registry import CATALOGS, translated

log = logging.getLogger("book.scaffold")
MAINTAINERS = settings.REPO_ROOT / "docs" / "maintainers.md"
TEMPLATE = Path(__file__).with_name("new_notebook.json")
NAME = re.compile(r"^(?P<number>\d\d)_(?P<exercise>[a-z][a-z0-9_]*)$")


@dataclass(frozen=True)
class Notebook:
    name: str  # NN_name: "name" is its TODO's function and answer cell (its test cell: name_values)
    title: str
    root: Path


def write_source(notebook: Notebook) -> None:
    """``book/new_notebook.json`` with the first notebook's setup (its heading and first code cell) in its SETUP
    cell, so that every notebook starts alike."""
    first = nbformat.read(settings.source_notebook(settings.assignment_ids(notebook.root)[0], notebook.root), 4)
    own = [cell for cell in first.cells if cell.get("id") not in hosted.RELEASE_CELL_IDS]  # not the release's
    setup = next(index for index, cell in enumerate(own) if cell.cell_type == "code")
    text = TEMPLATE.read_text().replace("EXERCISE", NAME.match(notebook.name)["exercise"])
    text = text.replace("NUMBER", notebook.name[:2]).replace("TITLE", json.dumps(notebook.title)[1:-1])
    source = nbformat.reads(text, as_version=4)
    at = next(index for index, cell in enumerate(source.cells) if cell.source == "SETUP")
    source.cells[at : at + 1], source.metadata = own[setup - 1 : setup + 1], first.metadata
    release = settings.release_notebook(notebook.name, notebook.root).relative_to(notebook.root).as_posix()
    hosted.stamp(source, release, hosted.release_version(), hosted.NEEDS.get(notebook.name, {}))  # as make release does
    path = settings.source_notebook(notebook.name, notebook.root)
    path.parent.mkdir(parents=True)
    nbformat.write(source, path)


def add_due_date(notebook: Notebook) -> None:
    with (notebook.root / "due_dates.csv").open("a", newline="") as file:
        csv.writer(file, lineterminator="\n").writerow([notebook.name, ""])


def add_to_plans(notebook: Notebook) -> None:
    path = notebook.root / "book" / "plans.json"
    plans = {name: [*weeks, [notebook.name[:2]]] for name, weeks in json.loads(path.read_text()).items()}
    path.write_text(json.dumps(plans, indent=2).replace("[\n      ", "[").replace('",\n      "', '", "') + "\n")


def command(notebook: Notebook, *argv: str) -> None:
    """``python argv...`` in the repository, with this Python's folder first on PATH (nbgrader runs alembic by name)."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    subprocess.run([sys.executable, *argv], cwd=notebook.root, check=True, timeout=600, env=os.environ | {"PATH": path})


def release(notebook: Notebook) -> None:
    command(notebook, "-m", "nbgrader", "generate_assignment", notebook.name, "--force")
    for language in translated():
        write_release(language, notebook.root)
        dump(language, notebook.name, {})  # its translations: none yet


def add_catalogs(notebook: Notebook) -> None:
    tfcourse_locale, hidden_locale = (notebook.root / folder for folder in CATALOGS[:2])
    for language in translated():
        update(language, notebook.name, notebook_messages(notebook.name, notebook.root), tfcourse_locale)
        update(language, notebook.name, hidden_messages_of(notebook.name, notebook.root), hidden_locale)


class Step(NamedTuple):
    places: str  # where it writes; {name}: the notebook, {code}: each translated edition
    what: str
    run: Callable[[Notebook], None]


STEPS = (
    Step("`solutions/{name}/{name}.ipynb`", "the source: the first notebook's setup, one TODO `name`, its graded test "
         "cell `name_values` with a hidden test", write_source),
    Step("`due_dates.csv`", "a row for the notebook, with no due date", add_due_date),
    Step("`book/plans.json`", "a week of its own at the end of each suggested plan", add_to_plans),
    Step("`notebooks/{name}/`, `notebooks_{code}/{name}/`, `editions/{code}/{name}.yaml`", "the student releases "
         "(`make release`) and each translated edition's translation file, empty", release),
    Step("`tfcourse/locale/{code}/{name}.po`, `autograder/locale/{code}/{name}.po`", "the message catalogs of its "
         "printouts and of its hidden tests (`python -m editions messages CODE`)", add_catalogs),
    Step("`classroom/k8s/peak_memory.json`", "its full-mode run, measured (`measure_peak_memory.py`)",
         lambda notebook: command(notebook, "classroom/k8s/measure_peak_memory.py", notebook.name)),
    Step("`docs/syllabus.md`, `docs/syllabus.{code}.md`", "the syllabus's points, hours and plans (`make syllabus`)",
         lambda notebook: command(notebook, "book/syllabus.py")),
)


def checklist() -> str:
    """The steps in words, as ``docs/maintainers.md`` lists them."""
    done = [f"{n}. {step.places.format(name='NN_name', code='CODE')}: {step.what}." for n, step in enumerate(STEPS, 1)]
    return "\n".join(['`python -m book.scaffold NN_name "Title"` writes:', "", *done])


def with_checklist(text: str) -> str:
    """``text`` (``docs/maintainers.md``) with its generated ``scaffold`` part rewritten from :func:`checklist`."""
    return GENERATED.sub(lambda part: f"{part[1]}{checklist()}\n{part[4]}" if part[2] == "scaffold" else part[0], text)


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
