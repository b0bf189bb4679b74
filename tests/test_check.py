"""The check that works anywhere (tfcourse.check): the last cell of each notebook and the command.

A half-done notebook 01 (one exercise right, one wrong, one untouched) is checked five ways: by its check
cell in a kernel that finds the notebook by name in its folder (English: every test's outcome reused from
the run), by Jupyter Server's session path (Chinese, the wrong exercise put right after its tests ran:
they run again) and by asking Colab's frontend for it (both editions; the frontend is a stand-in,
tests/support/colab, and so are its failures: no answer, an error, something else than a notebook), by
``python -m tfcourse.check`` (exit 1), and by the command of the documented GitHub Classroom workflow on a
finished notebook (exit 0).

Those seven start real kernels, six of them running the whole notebook (about 8 core-s each): they are marked slow
(``make test`` runs them; ``make test-fast`` keeps the tests that need no kernel).
"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

from autograder.course import settings
from autograder.course.notebooks import fill_answers, reference_answers
from editions.release import edition_notebook
from testbed.notebooks import read
from tests.support.editors import colab
from tfcourse.check import CHECK_CALL, COLAB_TIMEOUT_S, Failure, exercises, find_notebook, outcome

ASSIGNMENT = "01_attention"
WRONG = (".tril()", ".triu(diagonal=1)")  # causal_mask: True where a query may NOT attend
WORKFLOW = settings.REPO_ROOT / "docs" / "github-classroom" / "classroom.yml"
RUN_TIMEOUT_S = 600
COLAB_STANDIN = Path(__file__).parent / "support" / "colab"  # google.colab._message as the kernel imports it


def answered(release: nbformat.NotebookNode, *, half: bool) -> nbformat.NotebookNode:
    """``release`` with the reference answers; half done: causal_mask wrong and padding_mask untouched."""
    answers = reference_answers(read(settings.source_notebook(ASSIGNMENT)))
    if half:
        assert WRONG[0] in answers["causal_mask"]
        answers["causal_mask"] = answers["causal_mask"].replace(*WRONG)
        del answers["padding_mask"]
    return fill_answers(release, answers)


def english_release() -> nbformat.NotebookNode:
    return read(settings.release_notebook(ASSIGNMENT))


def check_cell_output(notebook: nbformat.NotebookNode, folder: Path) -> str:
    """Run the notebook in a kernel started in ``folder``, check cell included; that cell's printed text."""
    NotebookClient(notebook, timeout=RUN_TIMEOUT_S, allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    cell = next(cell for cell in notebook.cells if CHECK_CALL in cell.source)
    errors = [output for output in cell.outputs if output.output_type == "error"]
    assert not errors, errors
    return "".join(output.text for output in cell.outputs if output.output_type == "stream")


@pytest.fixture
def kernel_environment(monkeypatch):
    monkeypatch.setenv("TFCOURSE_FAST", "1")
    for name in ("TFCOURSE_EDITION", "JPY_SESSION_NAME", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_every_release_ends_with_the_check_cell_and_its_exercises_carry_points():
    for assignment in settings.assignment_ids():
        for path in (settings.release_notebook(assignment), edition_notebook("zh", assignment)):
            notebook = read(path)
            assert notebook.cells[-1].source == f'tfcourse.check_notebook("{assignment}")', path
            found = exercises(notebook.cells)
            assert found and all(exercise.points > 0 for exercise in found), path
    names = [exercise.name for exercise in exercises(english_release().cells)]
    assert names == ["scaled_dot_product_attention", "causal_mask", "padding_mask"]


def test_outcome_tells_the_untouched_stub_from_a_failure():
    stub = Failure("NotImplementedError", "TODO padding_mask is not written yet")
    wrong = Failure("AssertionError", "\ncausal_mask(4): 6 of 16 values differ\nmore")
    assert outcome([]) == "passed"
    assert outcome([stub, stub]) == "not attempted"
    assert outcome([stub, wrong]) == "failed"
    assert wrong.first_line() == "causal_mask(4): 6 of 16 values differ"
    assert Failure("NameError", "name 'x' is not defined").first_line() == "NameError: name 'x' is not defined"


def test_the_notebook_is_found_where_vs_code_names_it(tmp_path, monkeypatch):
    # VS Code's Jupyter extension puts the notebook's path in __vsc_ipynb_file__ (jupyterlab/jupyterlab#16282).
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "elsewhere" / "renamed.ipynb"
    path.parent.mkdir()
    nbformat.write(english_release(), path)
    found = find_notebook(ASSIGNMENT, {"__vsc_ipynb_file__": str(path)})
    assert [e.name for e in exercises(found["cells"])][0] == "scaled_dot_product_attention"
    with pytest.raises(FileNotFoundError):
        find_notebook(ASSIGNMENT, {})


def rows(table: str) -> dict[str, str]:
    """``{exercise: the rest of its row}`` of a printed table."""
    found = {}
    for line in table.splitlines():
        name, _, rest = line.partition(" ")
        found[name] = rest.strip()
    return found


@pytest.mark.slow
def test_check_cell_in_a_kernel_found_by_name_english(tmp_path, kernel_environment):
    notebook = answered(english_release(), half=True)
    nbformat.write(notebook, tmp_path / f"{ASSIGNMENT}.ipynb")
    table = check_cell_output(notebook, tmp_path)
    print(table)  # the report quotes it
    found = rows(table)
    assert found["scaled_dot_product_attention"] == "10  passed", table
    assert found["causal_mask"].startswith("3  failed: "), table
    assert found["padding_mask"] == "3  not attempted", table
    assert "visible tests passed for 10 of 16 points" in table


@pytest.mark.slow
def test_check_cell_in_a_kernel_found_by_session_path_chinese(tmp_path, kernel_environment):
    notebook = answered(read(edition_notebook("zh", ASSIGNMENT)), half=True)
    # causal_mask put right after its tests ran: the check runs those tests again, and only those
    fixed = reference_answers(read(settings.source_notebook(ASSIGNMENT)))["causal_mask"]
    notebook.cells.insert(len(notebook.cells) - 1, nbformat.v4.new_code_cell(fixed))
    saved = tmp_path / "saved" / f"{ASSIGNMENT}.ipynb"
    saved.parent.mkdir()
    nbformat.write(notebook, saved)
    kernel_environment.setenv("JPY_SESSION_NAME", str(saved))
    (tmp_path / "elsewhere").mkdir()  # the kernel's folder holds no notebook: only the session path finds it
    table = check_cell_output(notebook, tmp_path / "elsewhere")
    print(table)  # the report quotes it
    found = rows(table)
    assert found["scaled_dot_product_attention"] == "10  通过", table
    assert found["causal_mask"] == "3  通过", table
    assert found["padding_mask"] == "3  未尝试", table


@pytest.fixture
def colab_kernel(kernel_environment, tmp_path):
    """A kernel's environment as on Colab: its marker set, Kaggle's not, colabtools' ``_message`` (the stand-in)
    importable, the frontend's reply in ``reply.json`` beside the folder returned: the kernel's, empty (on Colab
    the notebook is no file beside the kernel)."""
    kernel_environment.setenv("COLAB_RELEASE_TAG", "release-colab-test")
    kernel_environment.delenv("KAGGLE_KERNEL_RUN_TYPE", raising=False)
    kernel_environment.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(COLAB_STANDIN),
                                                                           os.environ.get("PYTHONPATH")])))
    kernel_environment.setenv("COLAB_STANDIN_REPLY", str(tmp_path / "reply.json"))
    (tmp_path / "content").mkdir()
    return tmp_path / "content"


@pytest.mark.slow
@pytest.mark.parametrize("edition, words", [("en", ("passed", "failed: ", "not attempted")),
                                            ("zh", ("通过", "未通过：", "未尝试"))])
def test_check_cell_on_colab_reads_the_notebook_colab_sends(colab_kernel, edition, words):
    release = english_release() if edition == "en" else read(edition_notebook(edition, ASSIGNMENT))
    notebook = colab(answered(release, half=True))  # as Colab's frontend holds it: its own metadata added
    reply = {"data": {"ipynb": json.loads(nbformat.writes(notebook))}}  # the frontend's colab_reply
    (colab_kernel.parent / "reply.json").write_text(json.dumps(reply), encoding="utf-8")
    table = check_cell_output(notebook, colab_kernel)
    print(table)  # the report quotes it
    found = rows(table)
    passed, failed, untouched = words
    assert found.get("scaled_dot_product_attention") == f"10  {passed}", table
    assert found.get("causal_mask", "").startswith(f"3  {failed}"), table
    assert found.get("padding_mask") == f"3  {untouched}", table


@pytest.mark.slow
def test_check_cell_on_colab_says_why_colab_sent_no_notebook(colab_kernel):
    """Each failure of the request is one sentence, never a traceback, and never the table of a stale copy of the
    notebook lying in the kernel's folder; with Kaggle's marker set too, Colab is not asked (that copy is read)."""
    nbformat.write(english_release(), colab_kernel / f"{ASSIGNMENT}.ipynb")  # a stale copy: the untouched release
    replies = {"no reply": None, "an error": {"error": "notebook not saved"}, "no notebook": {"data": {"cells": []}},
               "not a dict": {"data": "<html>"}, "on Kaggle": {"data": {"ipynb": {"cells": []}}}}
    cells = [nbformat.v4.new_code_cell("import os\nimport tfcourse")]
    for number, (case, reply) in enumerate(replies.items()):
        path = colab_kernel.parent / f"reply-{number}.json"
        if reply is not None:
            path.write_text(json.dumps(reply), encoding="utf-8")
        kaggle = "os.environ['KAGGLE_KERNEL_RUN_TYPE'] = 'Interactive'\n" if case == "on Kaggle" else ""
        cells.append(nbformat.v4.new_code_cell(f"{kaggle}os.environ['COLAB_STANDIN_REPLY'] = {str(path)!r}\n"
                                               f'tfcourse.check_notebook("{ASSIGNMENT}")'))
    notebook = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(notebook, timeout=RUN_TIMEOUT_S, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(colab_kernel)}}).execute()
    said = {}
    for case, cell in zip(replies, notebook.cells[1:], strict=True):
        errors = [f"{output.ename}: {output.evalue}" for output in cell.outputs if output.output_type == "error"]
        assert not errors, f"{case}: the check raised instead of saying why Colab sent no notebook: {errors}"
        said[case] = "".join(output.text for output in cell.outputs if output.output_type == "stream")
    print(said)  # the report quotes them
    reasons = {"no reply": f"no answer within {COLAB_TIMEOUT_S} s",
               "an error": "it answered MessageError: notebook not saved",
               "no notebook": "an unexpected answer: {'cells': []}", "not a dict": "an unexpected answer: '<html>'"}
    for case, reason in reasons.items():
        assert said[case].startswith(f"Colab did not send this notebook ({reason}). Run this cell again"), (
            f"{case}: expected Colab's failure ({reason}), got {said[case]!r}")
    # the stale copy's 16 points (its answers never ran here), not the empty notebook the frontend would send
    assert "visible tests passed for 0 of 16 points" in said["on Kaggle"], (
        f"with Kaggle's marker the check should read the notebook's file, not ask Colab: {said['on Kaggle']!r}")


def run_command(command: list[str], folder: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(settings.REPO_ROOT),
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("TFCOURSE_EDITION", "JPY_SESSION_NAME", "NBGRADER_EXECUTION"):
        environment.pop(name, None)
    return subprocess.run(command, cwd=folder, env=environment, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, check=False)


@pytest.mark.slow
def test_command_exits_non_zero_on_a_half_done_notebook(tmp_path):
    path = tmp_path / f"{ASSIGNMENT}.ipynb"
    nbformat.write(answered(english_release(), half=True), path)
    done = run_command([sys.executable, "-m", "tfcourse.check", str(path)], tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    found = rows(done.stdout)
    assert found["scaled_dot_product_attention"] == "10  passed", done.stdout
    assert found["causal_mask"].startswith("3  failed: "), done.stdout
    assert found["padding_mask"] == "3  not attempted", done.stdout


@pytest.mark.slow
def test_github_classroom_workflow_command_passes_a_finished_notebook(tmp_path):
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["run-autograding-tests"]["steps"]
    grader = next(step for step in steps if str(step.get("uses", "")).startswith(
        "classroom-resources/autograding-command-grader"))
    release = settings.release_notebook(ASSIGNMENT).relative_to(settings.REPO_ROOT)
    command = shlex.split(grader["with"]["command"])
    assert command[-1] == str(release)
    visible_points = sum(exercise.points for exercise in exercises(english_release().cells))
    assert grader["with"]["max-score"] == visible_points
    (tmp_path / release).parent.mkdir(parents=True)
    nbformat.write(answered(english_release(), half=False), tmp_path / release)
    done = run_command(command, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not attempted" not in done.stdout and "failed" not in done.stdout, done.stdout
