"""Every notebook's visible tests under another PyTorch, the way a hosted service runs them: ``make compat``.

    python -m benchmarks.compat --torch 2.3.1 [--index-url URL] [--notebooks 01_attention ...]

A fresh virtualenv gets only that PyTorch, ipykernel and nbclient; the course's wheel is built from this checkout
(``pip wheel --no-deps``). Each notebook's student release, with the reference answers in its answer cells, is run
alone in a folder, its kernel started in another, in fast mode: its setup cell installs the course from the wheel
(``TFCOURSE_INSTALL_URL``), keeping that PyTorch, then every visible test runs. The venv and a JSON report stay in
``build/compat/torch-VERSION``. ``tests/test_hosted_install.py`` runs the same path with the pinned PyTorch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course import settings
from autograder.course.notebooks import fill_answers, grade_id, is_answer_cell
from tfcourse import hosted

ROOT = settings.REPO_ROOT
# What the wheel is built from: the package's folders, its licence and the sample it ships.
PACKAGE_FILES = ("pyproject.toml", "LICENSE", "tfcourse", "autograder", "benchmarks", "editions", "data/ag_news_sample")
INSTALL_SECONDS = 900
RUN_SECONDS = 600
# Runs inside the bare environment: the notebook with nbclient, its kernel started in argv[3].
RUNNER = """
import sys, nbformat
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
client = NotebookClient(notebook, timeout=300, startup_timeout=120, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[3]}})
try:
    client.execute()
finally:
    nbformat.write(notebook, sys.argv[2])
"""


def run(command: list, timeout: float, **options) -> subprocess.CompletedProcess:
    """Run ``command``; raise with the end of its output when it fails."""
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=timeout, **options)
    if done.returncode != 0:
        shown = [str(part) for part in command[:5]]
        raise RuntimeError(f"{shown} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def bare_environment(venv: Path, torch: str, pip_options: list[str]) -> Path:
    """A venv holding only ``torch`` (a requirement), ipykernel, nbclient and pip; its python."""
    run([sys.executable, "-m", "venv", venv], 120)
    python = venv / "bin" / "python"
    # --no-compile: no .pyc for torch's thousands of modules (half of the install's time on a small machine)
    run([python, "-m", "pip", "install", "--quiet", "--no-compile", torch, "ipykernel", "nbclient", *pip_options],
        INSTALL_SECONDS)
    return python


def course_wheel(python: Path, folder: Path) -> Path:
    """The course's wheel, built from a copy of the package's files: it stands in for the tagged release."""
    source = folder / "source"
    (source / "data").mkdir(parents=True)
    for name in PACKAGE_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, source / name)
    run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", source, "-w", folder / "wheel"], 300)
    (wheel,) = (folder / "wheel").glob("tfcourse-*.whl")
    return wheel


def with_answers(release: Path, assignment: str) -> NotebookNode:
    """The student release with the reference answers in its answer cells: what a student who is done runs."""
    source = nbformat.read(settings.source_notebook(assignment), as_version=4)
    answers = {grade_id(cell): cell.source for cell in source.cells if is_answer_cell(cell)}
    return fill_answers(nbformat.read(release, as_version=4), answers)


def run_hosted(python: Path, wheel: Path, notebook: NotebookNode, folder: Path) -> tuple[NotebookNode, float]:
    """Run the notebook alone in ``folder``, its kernel in another, as on Colab: (the notebook run, setup seconds)."""
    (folder / "notebook").mkdir(parents=True)
    (folder / "kernel").mkdir()
    path = folder / "notebook" / "notebook.ipynb"
    nbformat.write(notebook, path)
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("TFCOURSE_", "JPY_", "VIRTUAL_ENV", "PYTHONPATH", "NBGRADER"))}
    environment |= {"COLAB_RELEASE_TAG": "release-colab-test", hosted.INSTALL_URL_VARIABLE: wheel.as_uri(),
                    "TFCOURSE_FAST": "1", "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}",
                    "PIP_COMPILE": "0"}  # --no-compile, pip's own setting here: no .pyc (time), not the cell's
    done = folder / "done.ipynb"
    try:
        run([python, "-c", RUNNER, path, done, folder / "kernel"], RUN_SECONDS, cwd=folder / "kernel", env=environment)
    finally:
        ran = nbformat.read(done, as_version=4) if done.exists() else notebook
    setup = next(cell for cell in ran.cells if cell.get("id") == hosted.SETUP_CELL_ID)
    timing = setup.metadata.get("execution", {})
    keys = ("iopub.execute_input", "shell.execute_reply")
    if not all(key in timing for key in keys):
        return ran, float("nan")
    started, replied = (datetime.fromisoformat(timing[key]) for key in keys)
    return ran, (replied - started).total_seconds()


def errors(ran: NotebookNode) -> list[str]:
    """The errors the run's cells show: ``name: value`` each."""
    return [f"{output.ename}: {output.evalue}" for cell in ran.cells for output in cell.get("outputs", [])
            if output.output_type == "error"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", required=True, help="the PyTorch version to test, e.g. 2.3.1")
    parser.add_argument("--index-url", help="where pip finds that PyTorch (e.g. https://download.pytorch.org/whl/cpu)")
    parser.add_argument("--notebooks", nargs="*", default=settings.assignment_ids(), help="default: all seven")
    args = parser.parse_args(argv)
    folder = ROOT / "build" / "compat" / f"torch-{args.torch}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.monotonic()
    python = bare_environment(folder / "venv", f"torch=={args.torch}",
                              ["--index-url", args.index_url] if args.index_url else [])
    found = run([python, "-c", "import torch, sys; print(torch.__version__, sys.version.split()[0])"], 120)
    print(f"torch and python in the bare environment: {found.stdout.strip()} ({time.monotonic() - started:.0f} s)")
    wheel = course_wheel(python, folder)
    report = {"torch": args.torch, "found": found.stdout.strip(), "notebooks": {}}
    for assignment in args.notebooks:
        # each notebook's setup cell installs the course again (the first finds none to uninstall)
        subprocess.run([python, "-m", "pip", "uninstall", "--quiet", "--yes", "tfcourse"], capture_output=True,
                       timeout=120)
        clock = time.monotonic()
        try:
            ran, setup_seconds = run_hosted(python, wheel, with_answers(settings.release_notebook(assignment),
                                                                        assignment), folder / assignment)
            problems = errors(ran)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            setup_seconds, problems = float("nan"), [str(error)[-2000:]]
        seconds = time.monotonic() - clock
        report["notebooks"][assignment] = {"passed": not problems, "seconds": round(seconds, 1),
                                           "setup_seconds": round(setup_seconds, 1), "errors": problems}
        print(f"{assignment}: {'passed' if not problems else 'FAILED'} in {seconds:.0f} s "
              f"(setup cell {setup_seconds:.0f} s){''.join(chr(10) + '  ' + line for line in problems)}")
    (folder / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    failed = [name for name, result in report["notebooks"].items() if not result["passed"]]
    print(f"torch {args.torch}: {len(report['notebooks']) - len(failed)} of {len(report['notebooks'])} notebooks "
          f"passed their visible tests; report: {folder / 'report.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
