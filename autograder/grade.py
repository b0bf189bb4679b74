"""``grade``: autograde every submission in its own limited process and course copy, then merge.

One job (:func:`grade_submission`) grades one student's assignment: it checks the files and
scans them, copies them into a temporary course beside the assignment's gradebook (its
definition only), both outside the kernel zygote's sandbox, and the submission's other files
into a working folder inside it, runs nbgrader's autograde in the course copy in
a limited child of a zygote that has nbgrader loaded, whose kernels are forked by a zygote
that has ipykernel and the notebook's modules loaded (:mod:`autograder.zygote`,
:mod:`autograder.kernelstub`), re-runs the graded tests cleanly in a child of a third zygote
(:mod:`autograder.tamper`) and returns a picklable :class:`~autograder.results.SubmissionResult`.
Jobs run on any ``concurrent.futures`` executor, whose workers keep their zygotes from job to
job; only the calling process writes to the real gradebook, one result at a time.
"""

import dataclasses
import os
import re
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from tqdm import tqdm

from autograder import gradebook, tamper
from autograder.course import GRADING_DIRECTORY, assignment_ids, release_notebook, source_notebook
from autograder.isolation import Limits
from autograder.notebooks import grade_id, is_graded_test_cell
from autograder.results import (
    Status,
    SubmissionResult,
    TestResult,
    folder_digest,
    load_result,
    save_result,
)
from autograder.sandbox import bwrap_available
from autograder.sanitize import sanitize_notebook
from autograder.zygote import SandboxSpec, shared_zygote

STOPPED = {"KeyboardInterrupt", "CellTimeoutError", "TimeoutError", "MemoryError", "DeadKernelError"}
MAX_OUTPUT_CHARS = 20_000  # per output, in the autograded copy kept for formgrader and feedback
NBGRADER_PRELOAD = ("autograder.autograde_child",)  # what the autograde zygote imports once
KERNEL_PRELOAD = ("ipykernel.kernelapp",)  # and the kernel zygote, with the notebooks' own imports
ERROR_LINE = re.compile(r"^[\w.]*(Error|Exception|Interrupt)\b.*:")


@dataclass(frozen=True)
class GradeJob:
    root: Path
    assignment: str
    student: str
    submission: Path
    template_db: Path  # a gradebook holding only the assignment's definition
    limits: Limits = field(default_factory=Limits)
    grading_directory: str = GRADING_DIRECTORY
    clean_rerun: bool = True
    sandbox: bool = True  # run student code under bwrap (see autograder.sandbox)


def readable_data(root: Path) -> list[Path]:
    """Course files a notebook may read while graded: the data folder, when the course has one."""
    return [path for path in [root / "data"] if path.is_dir()]


def read_submission(path: Path) -> tuple[NotebookNode, list[str]]:
    """The notebook at ``path`` and the format repairs made; raises if nbgrader could not grade it.

    Cell ids in a notebook that declares format 4.4 (a cell pasted from a newer notebook) make
    it invalid though harmless: the format version is raised to 4.5 instead of refusing it.
    """
    notebook = nbformat.read(path, as_version=4)
    try:
        nbformat.validate(notebook)
        return notebook, []
    except nbformat.ValidationError:
        if notebook.nbformat_minor >= 5:
            raise
    notebook.nbformat_minor = 5
    for cell in notebook.cells:
        cell.setdefault("id", uuid.uuid4().hex[:8])
    nbformat.validate(notebook)
    return notebook, ["cell ids without format 4.5: format raised to 4.5"]


def regular_file(path: Path) -> bool:
    """A plain file, not a link (to the solutions, say) nor a FIFO that would block its reader."""
    return path.is_file() and not path.is_symlink()


def failure_messages(path: Path) -> dict[str, str]:
    """``{grade_id: message}`` for the graded test cells of an autograded notebook that failed."""
    if not regular_file(path):
        return {}
    messages = {}
    for cell in nbformat.read(path, as_version=4).cells:
        if not is_graded_test_cell(cell):
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                messages[grade_id(cell)] = f"{output.ename}: {output.evalue}"[:2000]
            elif output.output_type == "stream" and output.name == "stderr" and grade_id(cell) not in messages:
                messages[grade_id(cell)] = f"wrote to stderr: {output.text[:500]}"
    return messages


def interrupted_cells(path: Path) -> list[str]:
    """Notes on the ungraded cells of an autograded notebook that were stopped or ran out of memory."""
    if not regular_file(path):
        return []
    notes = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        for output in cell.get("outputs", []):
            if output.output_type == "error" and output.ename in STOPPED and not is_graded_test_cell(cell):
                notes.append(f"{path.stem} cell {index}: {output.ename} (cell time or memory limit)")
    return notes


def cap_outputs(notebook: NotebookNode, limit: int = MAX_OUTPUT_CHARS) -> NotebookNode:
    """Shorten stream outputs so that a submission printing megabytes stays viewable."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and len(output.text) > limit:
                output.text = output.text[:limit] + f"\n... [{len(output.text) - limit} characters cut by the grader]\n"
    return notebook


def expected_notebooks(cells: Iterable[gradebook.GradeCellInfo]) -> list[str]:
    return sorted({cell.notebook for cell in cells})


def grade_submission(job: GradeJob) -> SubmissionResult:
    """Grade one submission; never raises for anything the submission does."""
    start = time.monotonic()
    result = SubmissionResult(job.assignment, job.student, Status.GRADED, digest=folder_digest(job.submission))
    cells = gradebook.grade_cells(job.template_db, job.assignment)
    notebooks: dict[str, NotebookNode] = {}
    problems: list[str] = []
    for name in expected_notebooks(cells):
        path = job.submission / f"{name}.ipynb"
        if not path.exists():
            problems.append(f"{name}.ipynb not submitted")
            continue
        try:
            notebooks[name], repairs = read_submission(path)
            result.repairs += [f"{name}: {repair}" for repair in repairs]
        except Exception as error:  # noqa: BLE001 (any parse or schema error makes it unreadable)
            problems.append(f"{name}.ipynb unreadable: {type(error).__name__}: {str(error)[:300]}")
    result.tests = [TestResult(c.notebook, c.grade_id, c.max_score) for c in cells if c.autograded]
    if not notebooks:
        result.status = Status.UNREADABLE if any("unreadable" in p for p in problems) else Status.MISSING
        result.reason = "; ".join(problems)
        result.seconds = time.monotonic() - start
        return result

    folder = source_notebook(job.assignment, job.root).parent
    sources = {name: nbformat.read(folder / f"{name}.ipynb", as_version=4) for name in notebooks}
    releases = release_notebook(job.assignment, job.root).parent
    for name, notebook in notebooks.items():
        release = nbformat.read(releases / f"{name}.ipynb", as_version=4)
        notebooks[name], repairs = sanitize_notebook(notebook, release)
        result.repairs += [f"{name}: {repair}" for repair in repairs]
        result.flags += [f"{name}: {finding}" for finding in tamper.scan(notebooks[name], sources[name])]

    readable = tuple(readable_data(job.root))
    modules = tuple(dict.fromkeys(module for source in sources.values() for module in tamper.notebook_modules(source)))
    kernels = shared_zygote(KERNEL_PRELOAD + modules, SandboxSpec(readable, network=True) if job.sandbox else None,
                            listen=True)  # fmt: skip
    kernels.ensure_started()
    # nbgrader writes only where the kernels write, and in its own scratch: a file the student's
    # code turns into a link to the gradebook cannot make it write there.
    sandbox = SandboxSpec(readable, network=True, writable=(kernels.scratch,)) if job.sandbox else None
    nbgrader = shared_zygote(NBGRADER_PRELOAD, sandbox)
    # The kernels see only `visible`: never the notebook nbgrader runs, into which it puts the hidden tests back.
    visible, private = kernels.job_folder(), nbgrader.job_folder()  # the kernel's folder; the course copy, gradebook
    try:
        course, db = private / "course", private / "gradebook.db"
        shutil.copy(job.template_db, db)
        submitted = course / "grading" / "submitted" / job.student / job.assignment
        shutil.copytree(job.submission, submitted, symlinks=True)  # a link to the course stays a dead link
        for name, notebook in notebooks.items():
            nbformat.write(notebook, submitted / f"{name}.ipynb")
        shutil.copytree(job.submission, visible / "work", symlinks=True, ignore=shutil.ignore_patterns("*.ipynb"))
        arguments = [str(course), str(db), job.assignment, job.student, job.limits.cell_timeout,
                     str(kernels.socket_path), kernels.token, str(visible)]  # fmt: skip
        outcome = nbgrader.run("autograder.autograde_child:autograde", arguments, job.limits, private / "nbgrader")
        scores = gradebook.kernel_scores(db, job.assignment, job.student)
        if outcome.returncode != 0:  # nbgrader saves a submission with empty grades before it fails
            scores = None
        autograded = course / "grading" / "autograded" / job.student / job.assignment
        messages = {name: failure_messages(autograded / f"{name}.ipynb") for name in notebooks}
        problems += [note for name in notebooks for note in interrupted_cells(autograded / f"{name}.ipynb")]
        keep_autograded(autograded, list(notebooks), job)
        clean: dict[str, dict[str, dict]] = {}
        # Only a test the kernel run passed can be overturned by the clean re-run.
        if job.clean_rerun and scores and any(scores.values()):
            isolated = SandboxSpec(readable) if job.sandbox else None  # and without network
            for name, notebook in notebooks.items():
                zygote = shared_zygote(tamper.notebook_modules(sources[name]), isolated)
                clean[name] = tamper.clean_rerun(notebook, sources[name], job.limits, zygote)
    finally:
        shutil.rmtree(visible, ignore_errors=True)
        shutil.rmtree(private, ignore_errors=True)

    for test in result.tests:
        kernel = min(test.max_score, (scores or {}).get((test.notebook, test.grade_id), 0.0))
        verdict = clean.get(test.notebook, {}).get(test.grade_id)
        test.kernel_score = kernel
        test.clean_passed = None if verdict is None else verdict["passed"]
        test.score = 0.0 if test.clean_passed is False else kernel
        test.message = messages.get(test.notebook, {}).get(test.grade_id, "")
        if kernel > 0 and test.clean_passed is False:
            test.message = f"clean re-run: {verdict['message']}"
            result.flags.append(f"{test.notebook}: {test.grade_id} passed in the student's kernel but failed "
                                f"in the clean re-run ({verdict['message'][:200]})")  # fmt: skip

    if outcome.timed_out:
        result.status = Status.TIMED_OUT
        result.reason = f"stopped after the {job.limits.wall_seconds:.0f} s limit per submission"
    elif scores is None:
        result.status = Status.CRASHED
        result.reason = "nbgrader saved no grades: " + last_error(outcome.output_tail)
    elif result.flags:
        result.status = Status.FLAGGED
        result.reason = f"{len(result.flags)} finding(s) of the tamper check"
    if problems:
        result.reason = "; ".join(filter(None, [result.reason, *problems]))
    result.seconds = time.monotonic() - start
    return result


def last_error(log: str) -> str:
    """The most telling line of an autograde log: the last exception that is not nbgrader's summary."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if ERROR_LINE.match(line) and "NbGraderException" not in line]
    if errors:
        return errors[-1][:300]
    return lines[-1][:300] if lines else "no output (killed)"


def keep_autograded(folder: Path, names: list[str], job: GradeJob) -> None:
    """Copy the autograded notebooks (outputs capped) to the real grading folder, for formgrader."""
    target = job.root / job.grading_directory / "autograded" / job.student / job.assignment
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for path in [folder / f"{name}.ipynb" for name in names]:
        if not regular_file(path):
            continue
        try:
            nbformat.write(cap_outputs(nbformat.read(path, as_version=4)), target / path.name)
        except Exception:  # noqa: BLE001, S112 (a half-written copy is simply not kept)
            continue


def submitted_students(root: Path, grading_directory: str = GRADING_DIRECTORY) -> list[str]:
    folder = root / grading_directory / "submitted"
    return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def grade(
    *,
    root: Path,
    assignments: list[str] | None = None,
    students: list[str] | None = None,
    jobs: int = 2,
    force: bool = False,
    limits: Limits | None = None,
    executor: Executor | None = None,
    grading_directory: str = GRADING_DIRECTORY,
    clean_rerun: bool = True,
    sandbox: bool | None = None,
    progress: bool = True,
) -> list[SubmissionResult]:
    """Grade the submissions under ``root/grading/submitted``; returns the results of this run.

    Already graded submissions whose files have not changed are skipped unless ``force``.
    ``sandbox=None`` uses bubblewrap when it is installed.
    """
    root = Path(root).resolve()
    limits = limits or Limits()
    if limits.threads is None:  # share the cores between the parallel jobs
        limits = dataclasses.replace(limits, threads=max(1, (os.cpu_count() or 1) // max(1, jobs)))
    sandbox = bwrap_available() if sandbox is None else sandbox
    real_db = root / grading_directory / "gradebook.db"
    real_db.parent.mkdir(parents=True, exist_ok=True)
    everyone = students or sorted(set(submitted_students(root, grading_directory)) | set(gradebook.students(real_db)))
    results: list[SubmissionResult] = []
    with tempfile.TemporaryDirectory(prefix="templates-") as templates:
        grading_jobs: list[GradeJob] = []
        for assignment in assignments or assignment_ids(root):
            template_db = Path(templates) / f"{assignment}.db"
            gradebook.define_assignment(root, assignment, template_db)
            gradebook.define_assignment(root, assignment, real_db)
            for student in everyone:
                folder = root / grading_directory / "submitted" / student / assignment
                previous = load_result(root, assignment, student, grading_directory)
                if not force and previous is not None and previous.digest == folder_digest(folder):
                    continue
                if not folder.is_dir():
                    results.append(SubmissionResult(assignment, student, Status.MISSING, "nothing submitted"))
                    save_result(root, results[-1], grading_directory)
                    continue
                grading_jobs.append(GradeJob(root, assignment, student, folder, template_db, limits,
                                             grading_directory, clean_rerun, sandbox))  # fmt: skip
        own_executor = executor is None
        executor = executor or ProcessPoolExecutor(max_workers=max(1, jobs))
        try:
            futures: dict[Future, GradeJob] = {executor.submit(grade_submission, job): job for job in grading_jobs}
            for future in tqdm(as_completed(futures), total=len(futures), desc="grading", disable=not progress):
                job = futures[future]
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 (a grader failure must not stop the others)
                    result = SubmissionResult(job.assignment, job.student, Status.CRASHED,
                                              f"grader error: {type(error).__name__}: {error}",
                                              digest=folder_digest(job.submission))  # fmt: skip
                gradebook.merge(real_db, result)
                save_result(root, result, grading_directory)
                results.append(result)
        finally:
            if own_executor:
                executor.shutdown()
    return results
