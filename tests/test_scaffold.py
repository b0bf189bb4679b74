"""``python -m book.scaffold``: an eighth notebook in a temporary copy of the repository, written in every
place the course needs it, which ``make release`` and the syllabus's check then accept; and the maintainers'
checklist for adding a notebook is the scaffold's own steps."""

import csv
import json
from pathlib import Path

import nbformat
import pytest

from book.scaffold import MAINTAINERS, STEPS, checklist, with_checklist
from tests.support.repo_copy import make, repo_copy, run
from tfcourse.registry import editions, translated

NAME = "08_scaffolded"


def test_the_maintainers_checklist_is_the_scaffolds_steps() -> None:
    page = MAINTAINERS.read_text()
    assert checklist() in page and with_checklist(page) == page, "run: python -m book.scaffold --checklist"
    assert all(step.places.format(name="NN_name", code="CODE") in checklist() for step in STEPS)


@pytest.mark.slow
def test_the_scaffold_writes_a_notebook_the_course_accepts(tmp_path: Path) -> None:
    copy = repo_copy(tmp_path)
    run(copy, "python", "-m", "book.scaffold", NAME, "A scaffolded notebook")

    source = nbformat.read(copy / "solutions" / NAME / f"{NAME}.ipynb", as_version=4)
    graded = [cell.metadata["nbgrader"]["grade_id"] for cell in source.cells if "nbgrader" in cell.metadata]
    assert graded == ["scaffolded", "scaffolded_values"]
    release = copy / "notebooks" / NAME / f"{NAME}.ipynb"
    assert "### BEGIN SOLUTION" not in release.read_text() and "raise NotImplementedError" in release.read_text()
    for code in translated():
        translated_release = copy / editions()[code].release / NAME / f"{NAME}.ipynb"
        assert nbformat.read(translated_release, as_version=4).metadata["tfcourse"]["edition"] == code
        assert (copy / "editions" / code / f"{NAME}.yaml").is_file()
        assert "msgid" in (copy / "tfcourse" / "locale" / code / f"{NAME}.po").read_text()  # its passed(...) message
        assert "scaffolded of a matrix" in (copy / "autograder" / "locale" / code / f"{NAME}.po").read_text()
        assert f"`{NAME}`" in (copy / editions()[code].syllabus).read_text()
    with (copy / "due_dates.csv").open() as file:
        assert [NAME, ""] in list(csv.reader(file))
    plans = json.loads((copy / "book" / "plans.json").read_text())
    assert all(weeks[-1] == ["08"] for weeks in plans.values())
    measured = json.loads((copy / "classroom" / "k8s" / "peak_memory.json").read_text())["notebooks"][NAME]
    assert measured["wall_s"] > 0 and measured["peak_rss_mib"] > 50, measured

    written = {path: path.read_bytes() for path in sorted((copy / "notebooks").glob(f"{NAME}/*.ipynb"))}
    make(copy, "release")
    assert {path: path.read_bytes() for path in written} == written, "make release rewrote the scaffold's release"
    run(copy, "python", "book/syllabus.py", "--check")
