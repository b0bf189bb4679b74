"""The student kit (``make student-kit``): what it holds, what it must never hold, and that it works on its own.

The kit is built once for the module. Its files are scanned with the suite's leak finders: the fingerprints of
the reference answers (autograder/course/answer_leaks.py, which the builder's guard, classroom/kit_secrets.py, runs
too: it refuses every solution this scan finds), and, independently of the guard's runs of lines, the hidden-test
lines (tests/grader/leaks.py) and the model answers to the written questions, in both editions. The slow test
unpacks the kit into an empty folder, sets it up with its own command (``start.py --setup-only``: a real pip install
into the kit's own ``.venv``) and runs notebook 01 there with the kit's own Jupyter and kernel: filled with the
reference answers, every visible test passes; untouched, the first test cell stops at the TODO's
NotImplementedError.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from autograder.course import settings
from autograder.course.answer_leaks import course_solutions, leaks
from autograder.course.course import Course
from autograder.course.notebooks import (
    fill_answers,
    grade_id,
    is_graded_test_cell,
    is_student_cell,
    reference_answers,
    solution_code,
)
from autograder.pipeline.commands.feedback import SHORTEST_SECRET
from classroom import student_kit
from classroom.kit_secrets import KitLeak, refuse_leaks
from classroom.provision import course_files
from editions.release import edition_notebook
from editions.translations import load
from testbed.notebooks import answer_cells, read
from tests.conftest import TIMINGS
from tests.grader.hostile_class import hidden_test_blocks
from tests.grader.leaks import normalised, secret_lines

ROOT = settings.REPO_ROOT
ASSIGNMENTS = settings.assignment_ids()
KEPT_FROM_STUDENTS = ("solutions/", "autograder/", "editions/", "tests/")
COPIED = ("notebooks/", "notebooks_zh/", "tfcourse/", "data/ag_news_sample/", "data/README.md", "LICENSE",
          "LICENSE-CONTENT", "requirements-removed.txt")
WRITTEN = {"README.md", "start.py", "requirements.txt", "constraints.txt", "pyproject.toml"}
NOTEBOOK = "01_attention"


@pytest.fixture(scope="module")
def kit_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return student_kit.build(tmp_path_factory.mktemp("student-kit"))


@pytest.fixture(scope="module")
def entries(kit_zip: Path) -> dict[str, bytes]:
    """The kit's files by their path under its one top folder, which the zip is named after."""
    with zipfile.ZipFile(kit_zip) as archive:
        names = [name for name in archive.namelist() if not name.endswith("/")]
        assert {name.split("/", 1)[0] for name in names} == {kit_zip.stem}
        return {name.split("/", 1)[1]: archive.read(name) for name in names}


def entry_text(name: str, data: bytes) -> str:
    """What a student reads in a file: a notebook's cells, any other file as text."""
    if name.endswith(".ipynb"):
        return "\n".join(cell.source for cell in nbformat.reads(data.decode(), as_version=4).cells)
    return data.decode(errors="replace")


def release_lines() -> set[str]:
    paths = [settings.release_notebook(a) for a in ASSIGNMENTS] + [edition_notebook("zh", a) for a in ASSIGNMENTS]
    return {line for path in paths for cell in read(path).cells for line in normalised(cell.source)}


def hidden_lines() -> set[str]:
    """The hidden-test lines students have not seen: in neither release nor the helper package the repository has."""
    helpers = {line for path in (ROOT / "tfcourse").rglob("*.py") for line in normalised(path.read_text())}
    return secret_lines(Course.default()) - helpers


def written_answer_lines() -> set[str]:
    """The lines of the model answers to the written questions, English and Chinese, that no release shows."""
    answers = []
    for assignment in ASSIGNMENTS:
        source = read(settings.source_notebook(assignment))
        written = [cell for cell in source.cells if cell.cell_type == "markdown" and is_student_cell(cell)]
        translations = load("zh", assignment)
        answers += [reference_answers(source)[grade_id(cell)] for cell in written]
        answers += [translations[cell.id].text for cell in written if cell.id in translations]
    lines = {line for answer in answers for line in normalised(answer) if len(line) >= SHORTEST_SECRET}
    return lines - release_lines()


def what_students_must_not_get(files: dict[str, bytes]) -> list[str]:
    """Every file of ``files`` from a folder students never get, or holding a secret, with the secret."""
    texts = {name: entry_text(name, data) for name, data in files.items()}
    found = [f"{name} comes from {name.split('/')[0]}/" for name in files if name.startswith(KEPT_FROM_STUDENTS)]
    found += leaks(texts.items(), course_solutions())
    hidden, written = hidden_lines(), written_answer_lines()
    for name, text in texts.items():
        lines = normalised(text)
        found += [f"{name} holds a hidden-test line: {line}" for line in hidden.intersection(lines)]
        found += [
            f"{name} holds a written answer: {answer}" for answer in written if any(answer in line for line in lines)
        ]
    return found


def test_the_kit_holds_the_student_files_of_the_repository_and_its_own_set_up(entries):
    copied = {name for name in course_files() if name.startswith(COPIED)}
    assert set(entries) == copied | WRITTEN
    assert all(entries[name] == (ROOT / name).read_bytes() for name in copied)
    assert {f"{folder}/{a}/{a}.ipynb" for folder in ("notebooks", "notebooks_zh") for a in ASSIGNMENTS} <= copied
    assert {"LICENSE", "LICENSE-CONTENT", "data/README.md", "tfcourse/locale/zh/tfcourse.po"} <= copied
    readme = entries["README.md"].decode()
    assert "python3 start.py" in readme and student_kit.version() in readme and "$" not in readme


def test_the_kit_pins_the_repository_s_versions_and_packages_tfcourse_alone(entries):
    repository_pins = set((ROOT / "requirements.txt").read_text().splitlines())
    kit_pins = [line for line in entries["requirements.txt"].decode().splitlines() if not line.startswith("#")]
    assert len(kit_pins) == len(student_kit.STUDENT_PACKAGES) and set(kit_pins) <= repository_pins
    assert entries["constraints.txt"] == (ROOT / "requirements-lock.txt").read_bytes()
    kit_project, project = (tomllib.loads(text) for text in (entries["pyproject.toml"].decode(),
                                                             (ROOT / "pyproject.toml").read_text()))
    del project["project"]["entry-points"]  # the TLJH plugin's: its module is not in the kit
    assert kit_project["project"] == project["project"] and kit_project["build-system"] == project["build-system"]
    assert kit_project["tool"]["setuptools"]["packages"]["find"]["include"] == ["tfcourse*"]


def test_the_kit_holds_no_solution_no_hidden_test_and_no_reference_answer(entries):
    assert not what_students_must_not_get(entries)


def test_the_scan_finds_what_a_kit_with_the_instructors_files_would_hand_out(entries):
    careless = {name: (ROOT / name).read_bytes() for name in (f"solutions/{NOTEBOOK}/{NOTEBOOK}.ipynb",
                                                              f"editions/zh/{NOTEBOOK}.yaml")}
    found = what_students_must_not_get({**entries, **careless})
    for name in careless:
        assert f"{name} comes from {name.split('/')[0]}/" in found
    solution = f"solutions/{NOTEBOOK}/{NOTEBOOK}.ipynb"
    assert f"{solution} holds the solution of {NOTEBOOK}/sdpa" in found
    assert any(line.startswith(f"{solution} holds a hidden-test line") for line in found)
    assert any(line.startswith(f"editions/zh/{NOTEBOOK}.yaml holds a written answer") for line in found)


def planted_solution() -> tuple[str, bytes]:
    """The first lines of notebook 01's first answer, indented otherwise, in a module of the helper package."""
    code = solution_code(next(iter(answer_cells(read(settings.source_notebook(NOTEBOOK))).values())).source)
    lines = [line.strip() for line in code.splitlines() if line.strip()][:3]
    return "tfcourse/planted.py", ("def helper():\n" + "".join(f"        {line}\n" for line in lines)).encode()


def planted_hidden_test() -> tuple[str, bytes]:
    """Notebook 01's release with a hidden-test block put into its first cell."""
    release = read(settings.release_notebook(NOTEBOOK))
    release.cells[0].source += "\n" + hidden_test_blocks(read(settings.source_notebook(NOTEBOOK)))[0]
    return f"notebooks/{NOTEBOOK}/{NOTEBOOK}.ipynb", nbformat.writes(release).encode()


def planted_one_line_answer() -> tuple[str, bytes]:
    """Notebook 01's ``causal_mask`` answer, one line, as the body of a function in the helper package: the suite's
    scan finds it (a solution shorter than three lines is a fingerprint whole) where runs of three lines did not."""
    answer = solution_code(answer_cells(read(settings.source_notebook(NOTEBOOK)))["causal_mask"].source)
    assert len([line for line in answer.splitlines() if line.strip()]) == 1, answer
    return "tfcourse/planted.py", f"def mask(size, device=None):\n{answer}  # mine\n".encode()


@pytest.mark.parametrize(
    ("planted", "says"),
    [(planted_solution, ": "), (planted_hidden_test, ": "),
     (planted_one_line_answer, f" holds the solution of {NOTEBOOK}/causal_mask$")],
    ids=["solution", "hidden-test", "one-line-answer"],
)
def test_the_builder_refuses_a_kit_holding_a_planted_secret(planted, says, tmp_path, monkeypatch):
    """The builder, given the kit's files and one planted file, stops with a message naming the file and writes
    nothing."""
    name, data = planted()
    files = student_kit.kit_files()
    refuse_leaks(files, ROOT)  # the kit as it is passes
    monkeypatch.setattr(student_kit, "kit_files", lambda: {**files, name: data})
    refused = f"(?m)would hand students a hidden test or a reference answer:\n(.*\n)*{name}{says}"
    with pytest.raises(KitLeak, match=refused):
        student_kit.build(tmp_path)
    assert not [*tmp_path.iterdir()]


def kit_environment() -> dict[str, str]:
    """This environment without what would let the kit's Python import the repository's packages."""
    kept = {name: value for name, value in os.environ.items()
            if name not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    # On Linux without an NVIDIA GPU (here and in CI) start.py asks PyTorch's CPU index for torch first; with no
    # network pip's retries would wait out that index: one try, then the wheel pip's own configuration finds.
    # PIP_COMPILE=0 (pip's --no-compile): no .pyc for every module installed, torch's thousands among them (35 of the
    # install's 83 core-s here); Python writes those of the modules the kit's Jupyter and kernels import, as it does
    # on a student's machine (hence PYTHONDONTWRITEBYTECODE left out).
    return {**kept, "PIP_RETRIES": "0", "PIP_COMPILE": "0"}


def execute_in_kit(kit: Path, notebooks: dict[str, nbformat.NotebookNode], output: Path) -> dict[str, list]:
    """Run ``notebooks`` (name -> notebook) in the kit's notebook 01 folder with the kit's own Jupyter and kernel;
    each notebook's cells as executed (errors let through)."""
    folder = kit / "notebooks" / NOTEBOOK
    for name, notebook in notebooks.items():
        nbformat.write(notebook, folder / f"{name}.ipynb")
    command = [str(kit / ".venv" / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute", "--allow-errors",
               "--output-dir", str(output), *(f"{name}.ipynb" for name in notebooks)]
    run = subprocess.run(command, cwd=folder, env=kit_environment(), capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return {name: read(output / f"{name}.ipynb").cells for name in notebooks}


def errors(cell: nbformat.NotebookNode) -> list[str]:
    return [output.ename for output in cell.get("outputs", []) if output.output_type == "error"]


WHERE_FROM = """import importlib, pkgutil, sys
import tfcourse
for module in pkgutil.iter_modules(tfcourse.__path__):
    importlib.import_module(f"tfcourse.{module.name}")
print(sys.executable, tfcourse.__file__, sep="\\n")"""


@pytest.mark.slow
def test_the_kit_sets_itself_up_with_its_own_command_and_passes_notebook_01_s_visible_tests(kit_zip, tmp_path, request):
    with zipfile.ZipFile(kit_zip) as archive:
        archive.extractall(tmp_path / "unpacked")
    kit = tmp_path / "unpacked" / kit_zip.stem
    # the kit's .venv holds about 1.5 GB (PyTorch): pytest keeps its last runs' folders, so it goes at once
    request.addfinalizer(lambda: shutil.rmtree(kit / ".venv", ignore_errors=True))
    start = time.perf_counter()
    setup = subprocess.run([sys.executable, "start.py", "--setup-only"], cwd=kit, env=kit_environment(),
                           capture_output=True, text=True, timeout=1200)
    TIMINGS["student kit: start.py --setup-only (pip install into its .venv)"] = time.perf_counter() - start
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-3000:]
    again = subprocess.run([sys.executable, "start.py", "--setup-only"], cwd=kit, env=kit_environment(),
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and not again.stdout, f"set up again with nothing changed: {again.stdout[-500:]}"

    release = read(kit / "notebooks" / NOTEBOOK / f"{NOTEBOOK}.ipynb")
    filled = fill_answers(release, reference_answers(read(settings.source_notebook(NOTEBOOK))))
    filled.cells.append(new_code_cell(WHERE_FROM))
    first_test = next(index for index, cell in enumerate(release.cells) if is_graded_test_cell(cell))
    untouched = nbformat.from_dict({**release, "cells": release.cells[: first_test + 1]})
    start = time.perf_counter()
    ran = execute_in_kit(kit, {"filled": filled, "untouched": untouched}, tmp_path / "executed")
    TIMINGS[f"student kit: {NOTEBOOK} filled and untouched, in the kit's kernel"] = time.perf_counter() - start

    tests = [cell for cell in ran["filled"] if is_graded_test_cell(cell)]
    assert len(tests) == sum(map(is_graded_test_cell, release.cells)) > 0
    failed = {index: errors(cell) for index, cell in enumerate(ran["filled"]) if errors(cell)}
    assert not failed, f"cells of the filled notebook failed in the kit: {failed}"
    python, package = ran["filled"][-1].outputs[0].text.split()
    assert Path(python).is_relative_to(kit / ".venv")
    assert Path(package).resolve() == (kit / "tfcourse" / "__init__.py").resolve()
    assert not any(errors(cell) for cell in ran["untouched"][:first_test])
    assert errors(ran["untouched"][first_test]) == ["NotImplementedError"]


def _said(part: str) -> tuple[set[str], int]:
    """What a part of the kit's README names (its code, whitespace folded) and how many points it makes."""
    blocks = re.findall(r"^```\n(.*?)^```", part, re.MULTILINE | re.DOTALL)
    prose = re.sub(r"^```\n.*?^```", "", part, flags=re.MULTILINE | re.DOTALL)
    code = {" ".join(span.split()) for span in [*blocks, *re.findall(r"`([^`]+)`", prose)]}
    return code, len(re.findall(r"^- ", part, re.MULTILINE))


def test_the_kit_readme_says_in_chinese_all_it_says_in_english():
    english, chinese = (student_kit.TEMPLATES / "README.md").read_text().split("## 中文说明")
    (english_code, english_points), (chinese_code, chinese_points) = _said(english), _said(chinese)
    assert chinese_code == english_code, (english_code - chinese_code, chinese_code - english_code)
    assert chinese_points == english_points
    for subject in ("TFCOURSE_FAST=1", "TFCOURSE_MPS=1", "data/ag_news/", "--setup-only", "tfcourse.check", "CUDA",
                    "NVIDIA GPU", "nvidia-smi"):
        assert subject in english and subject in chinese, subject


def kit_start():
    """The kit's start.py as a module (it imports only Python's standard library)."""
    spec = importlib.util.spec_from_file_location("kit_start", student_kit.TEMPLATES / "start.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up while it is made
    spec.loader.exec_module(module)
    return module


def test_start_py_decides_per_platform_from_the_machine_s_facts():
    start = kit_start()
    windows = start.Machine("win32", "AMD64", nvidia=False)
    mac = start.Machine("darwin", "arm64", nvidia=False)
    linux, linux_gpu = start.Machine("linux", "x86_64", nvidia=False), start.Machine("linux", "x86_64", nvidia=True)
    assert [start.python_command(m) for m in (windows, mac, linux)] == ["py", "python3", "python3"]
    assert str(start.venv_python(windows, PurePosixPath(".venv"))) == r".venv\Scripts\python.exe"
    assert str(start.venv_python(mac, PurePosixPath(".venv"))) == ".venv/bin/python"
    # PyTorch's CPU index only on Linux without NVIDIA's driver tool; pip's own index elsewhere
    assert [start.torch_index(m, {}) for m in (windows, mac, linux, linux_gpu)] == [None, None, start.CPU_INDEX, None]
    assert start.torch_index(linux, {start.TORCH_INDEX_VARIABLE: ""}) is None
    # the repository's requirements.txt is the kit's (classroom/student_kit.py)
    cpu_first, *rest = start.install_commands(linux, PurePosixPath(".venv/bin/python"), {}, settings.REPO_ROOT)
    pinned = start.torch_requirement((settings.REPO_ROOT / "requirements.txt").read_text())
    assert pinned.startswith("torch==") and " " not in pinned
    assert cpu_first[4:] == ["install", f"{pinned}+cpu", "--extra-index-url", start.CPU_INDEX, "-c", "constraints.txt"]
    assert [command[4:6] for command in rest] == [
        ["install", "-r"], ["install", "--no-deps"], ["uninstall", "--quiet"]]
    assert len(start.install_commands(mac, PurePosixPath(".venv/bin/python"), {}, settings.REPO_ROOT)) == 3


@pytest.mark.parametrize(("environment", "system", "chinese"), [
    ({"TFCOURSE_EDITION": "zh", "LANG": "en_US.UTF-8"}, None, True),
    ({"TFCOURSE_EDITION": "en", "LANG": "zh_CN.UTF-8"}, None, False),
    ({"LANG": "zh_CN.UTF-8"}, None, True),
    ({"LANG": "en_GB.UTF-8"}, "zh_CN", False),
    ({}, "Chinese (Simplified)_China", True),  # what locale.getlocale() says on a Chinese Windows
    ({}, "en_US", False),
])
def test_start_py_speaks_the_student_s_language(environment, system, chinese, monkeypatch):
    start = kit_start()
    assert start.chinese(environment, system) is chinese
    for name in ("TFCOURSE_EDITION", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TFCOURSE_EDITION", "zh" if chinese else "en")
    says = start.say("failed", command="pip install", again="python3 start.py")
    assert ("请先解决" in says) is chinese and "make" not in says


def test_the_kit_s_messages_never_name_a_makefile():
    start = kit_start()
    for text in (*start.MESSAGES.values(), *start.ENGLISH.values(), (student_kit.TEMPLATES / "README.md").read_text()):
        assert "make " not in text and "Makefile" not in text, text
