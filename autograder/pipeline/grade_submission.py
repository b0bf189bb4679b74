"""One grading job: one student's assignment, graded in isolation, as a picklable result.

:func:`grade_submission` is a sequence of named steps: read the notebooks, repair and scan
them, run nbgrader's autograde in the student's kernel, keep the autograded copies for
formgrader, re-run the graded tests cleanly, award the points and say why. Nothing the
submission does makes it raise.

The kernel run: nbgrader runs in a child of a zygote that has nbgrader loaded, on a course
copy that holds only this submission, beside the assignment's gradebook (its definition,
hidden tests included) in that child's private folder. Its kernels are forked by a second
zygote, in a sandbox that sees only the kernel's working folder (the submission's other
files), never the notebook into which nbgrader puts the hidden tests back
(:mod:`autograder.isolated.autograde_child`, :mod:`autograder.isolated.kernelstub`).
Each cell stops at its limit (:mod:`autograder.pipeline.cell_limits`).

The clean re-run (:mod:`autograder.pipeline.clean_rerun`) runs in a child of a third zygote,
without network. It takes back points the kernel run gave to tampered code, and it scores
the tests when the kernel run did not finish (a kernel that died, a job past its wall
limit): a loop or a crash costs the tests that meet it, not the whole notebook.
"""

import re
import shutil
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course.notebook_code import notebook_modules
from autograder.course.notebooks import grade_id, is_graded_test_cell
from autograder.course.paths import GRADING_DIRECTORY, GradingFolder
from autograder.course.settings import release_notebook, source_notebook
from autograder.isolated.protocol import AutogradeRequest
from autograder.launch.limits import Limits, Outcome
from autograder.launch.zygote import SandboxSpec, shared_zygote
from autograder.pipeline import clean_rerun, gradebook, static_scan
from autograder.pipeline.cell_limits import CellLimits, cell_seconds
from autograder.pipeline.results import Status, SubmissionResult, TestResult, folder_digest, timed
from autograder.pipeline.sanitize import sanitize_notebook

STOPPED = {"KeyboardInterrupt", "CellTimeoutError", "TimeoutError", "MemoryError", "DeadKernelError"}
MAX_OUTPUT_CHARS = 20_000  # per output, in the autograded copy kept for formgrader and feedback
NBGRADER_PRELOAD = ("autograder.isolated.autograde_child",)  # what the autograde zygote imports once
KERNEL_PRELOAD = ("ipykernel.kernelapp",)  # and the kernel zygote, with the notebooks' own imports
ERROR_LINE = re.compile(r"^[\w.]*(Error|Exception|Interrupt)\b.*:")
# Modules that a notebook's modules import lazily, on first use, in seconds. A cell stopped at its limit
# while importing one would leave it half-initialised for every later cell: the zygotes import them up front.
LAZY_IMPORTS = {"torch": ("torch._dynamo",)}


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
    sandbox: bool = True  # run student code under bwrap (see autograder.launch.sandbox)
    cell_limits: CellLimits | None = None  # None: every cell gets the cell timeout
    cells: tuple[gradebook.GradeCellInfo, ...] = ()  # the assignment's grade cells, read once by grade()


@dataclass
class KernelRun:
    """What nbgrader's autograde in the student's kernel gave."""

    outcome: Outcome
    scores: dict[tuple[str, str], float] | None  # None: nbgrader saved no grades
    autograded: dict[str, NotebookNode]  # the notebooks as run, hidden tests and outputs in
    problems: list[str]

    @property
    def finished(self) -> bool:
        return self.scores is not None and not self.outcome.timed_out


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


def expected_notebooks(cells: Iterable[gradebook.GradeCellInfo]) -> list[str]:
    return sorted({cell.notebook for cell in cells})


def read_notebooks(
    job: GradeJob, names: list[str], result: SubmissionResult
) -> tuple[dict[str, NotebookNode], list[str]]:
    """The submitted notebooks that nbgrader can read, and a note for each that is missing or unreadable."""
    notebooks: dict[str, NotebookNode] = {}
    problems: list[str] = []
    for name in names:
        path = job.submission / f"{name}.ipynb"
        if not path.exists():
            problems.append(f"{name}.ipynb not submitted")
            continue
        try:
            notebooks[name], repairs = read_submission(path)
            result.repairs += [f"{name}: {repair}" for repair in repairs]
        except Exception as error:  # noqa: BLE001 (any parse or schema error makes it unreadable)
            problems.append(f"{name}.ipynb unreadable: {type(error).__name__}: {str(error)[:300]}")
    return notebooks, problems


def repair_and_scan(job: GradeJob, notebooks: dict[str, NotebookNode], sources: dict[str, NotebookNode],
                    result: SubmissionResult) -> None:  # fmt: skip
    """Sanitize each notebook against its release (in place) and note what the static scan finds."""
    releases = release_notebook(job.assignment, job.root).parent
    for name, notebook in notebooks.items():
        release = nbformat.read(releases / f"{name}.ipynb", as_version=4)
        notebooks[name], repairs = sanitize_notebook(notebook, release)
        result.repairs += [f"{name}: {repair}" for repair in repairs]
        result.flags += [f"{name}: {finding}" for finding in static_scan.scan(notebooks[name], sources[name])]


def preloads(*sources: NotebookNode) -> tuple[str, ...]:
    """What a zygote for these notebooks imports once: their own imports and what those import lazily."""
    modules = tuple(dict.fromkeys(module for source in sources for module in notebook_modules(source)))
    return modules + tuple(lazy for module in modules for lazy in LAZY_IMPORTS.get(module, ()))


def merged_cell_limits(job: GradeJob, names: Iterable[str]) -> dict[str, float]:
    """The cell limits of the submission's notebooks, in one mapping (cell keys do not clash across them)."""
    limits: dict[str, float] = {}
    for name in names:
        limits.update(job.cell_limits.of(name) if job.cell_limits else {})
    return limits


def run_in_kernel(job: GradeJob, notebooks: dict[str, NotebookNode], sources: dict[str, NotebookNode],
                  phases: dict[str, float]) -> KernelRun:  # fmt: skip
    """nbgrader's autograde of the notebooks, in a limited child of the nbgrader zygote; steps timed in ``phases``."""
    readable = tuple(readable_data(job.root))
    # Neither the kernels nor nbgrader have a network: they talk through Unix sockets in the kernels' scratch.
    kernel_sandbox = SandboxSpec(readable) if job.sandbox else None
    kernels = shared_zygote(KERNEL_PRELOAD + preloads(*sources.values()), kernel_sandbox, listen=True)
    with timed(phases, "zygote start"):
        kernels.ensure_started()
    # nbgrader writes only where the kernels write, and in its own scratch: a file the student's
    # code turns into a link to the gradebook cannot make it write there.
    nbgrader_sandbox = SandboxSpec(readable, writable=(kernels.scratch,)) if job.sandbox else None
    nbgrader = shared_zygote(NBGRADER_PRELOAD, nbgrader_sandbox)
    with timed(phases, "zygote start"):
        nbgrader.ensure_started()
    # The kernels see only `visible`: never the notebook nbgrader runs, into which it puts the hidden tests back.
    visible, private = kernels.job_folder(), nbgrader.job_folder()  # the kernel's folder; the course copy, gradebook
    try:
        with timed(phases, "course copy"):
            course, db = private / "course", private / "gradebook.db"
            shutil.copy(job.template_db, db)
            submitted = GradingFolder(course).submitted(job.student, job.assignment)
            shutil.copytree(job.submission, submitted, symlinks=True)  # a link to the course stays a dead link
            for name, notebook in notebooks.items():
                nbformat.write(notebook, submitted / f"{name}.ipynb")
            shutil.copytree(job.submission, visible / "work", symlinks=True, ignore=shutil.ignore_patterns("*.ipynb"))
        request = AutogradeRequest(
            course=str(course), gradebook=str(db), assignment=job.assignment, student=job.student,
            cell_timeout=job.limits.cell_timeout, cell_limits=merged_cell_limits(job, notebooks),
            kernel_socket=str(kernels.socket_path), kernel_token=kernels.token, kernel_folder=str(visible),
        )  # fmt: skip
        outcome = nbgrader.run(request, job.limits, private / "nbgrader")
        with timed(phases, "read back"):
            # nbgrader saves a submission with empty grades before it fails
            scores = gradebook.kernel_scores(db, job.assignment, job.student) if outcome.returncode == 0 else None
            autograded = read_autograded(GradingFolder(course).autograded(job.student, job.assignment), notebooks)
    finally:
        with timed(phases, "course copy"):
            shutil.rmtree(visible, ignore_errors=True)
            shutil.rmtree(private, ignore_errors=True)
    cells = sum(sum(cell_seconds(notebook).values()) for notebook in autograded.values())
    phases["kernel: cells"] = phases.get("kernel: cells", 0.0) + cells
    phases["kernel: nbgrader"] = phases.get("kernel: nbgrader", 0.0) + max(0.0, outcome.seconds - cells)
    problems = [note for name, notebook in autograded.items() for note in interrupted_cells(name, notebook)]
    return KernelRun(outcome, scores, autograded, problems)


def read_autograded(folder: Path, names: Iterable[str]) -> dict[str, NotebookNode]:
    """The autograded notebooks nbgrader wrote (a missing or broken one is left out)."""
    autograded = {}
    for name in names:
        path = folder / f"{name}.ipynb"
        if not regular_file(path):
            continue
        try:
            autograded[name] = nbformat.read(path, as_version=4)
        except Exception:  # noqa: BLE001, S112 (a half-written copy is simply not kept)
            continue
    return autograded


def failure_messages(notebook: NotebookNode) -> dict[str, str]:
    """``{grade_id: message}`` for the graded test cells of an autograded notebook that failed."""
    messages = {}
    for cell in notebook.cells:
        if not is_graded_test_cell(cell):
            continue
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                messages[grade_id(cell)] = f"{output.ename}: {output.evalue}"[:2000]
            elif output.output_type == "stream" and output.name == "stderr" and grade_id(cell) not in messages:
                messages[grade_id(cell)] = f"wrote to stderr: {output.text[:500]}"
    return messages


def interrupted_cells(name: str, notebook: NotebookNode) -> list[str]:
    """Notes on the ungraded cells of an autograded notebook that were stopped or ran out of memory."""
    notes = []
    for index, cell in enumerate(notebook.cells):
        stops = [o.ename for o in cell.get("outputs", []) if o.output_type == "error" and o.ename in STOPPED]
        if stops and not is_graded_test_cell(cell):
            notes.append(f"{name} cell {index}: {' + '.join(dict.fromkeys(stops))} (cell time or memory limit)")
    return notes


def cap_outputs(notebook: NotebookNode, limit: int = MAX_OUTPUT_CHARS) -> NotebookNode:
    """Shorten stream outputs so that a submission printing megabytes stays viewable."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and len(output.text) > limit:
                output.text = output.text[:limit] + f"\n... [{len(output.text) - limit} characters cut by the grader]\n"
    return notebook


def keep_autograded(autograded: dict[str, NotebookNode], job: GradeJob) -> None:
    """Write the autograded notebooks (outputs capped) to the real grading folder, for formgrader."""
    target = GradingFolder(job.root, job.grading_directory).autograded(job.student, job.assignment)
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for name, notebook in autograded.items():
        nbformat.write(cap_outputs(notebook), target / f"{name}.ipynb")


def rerun_cleanly(job: GradeJob, notebooks: dict[str, NotebookNode], sources: dict[str, NotebookNode],
                  kernel: KernelRun, phases: dict[str, float]) -> dict[str, dict[str, dict]]:  # fmt: skip
    """``{notebook: {grade_id: verdict}}`` of the clean re-run, when it has something to decide.

    It runs when the kernel run did not finish (then it is the only score there is), and,
    unless the job turns it off, when the kernel run gave points that it could take back.
    """
    scored = kernel.finished and any(kernel.scores.values())
    if kernel.finished and not (job.clean_rerun and scored):
        return {}
    isolated = SandboxSpec(tuple(readable_data(job.root))) if job.sandbox else None
    verdicts = {}
    for name, notebook in notebooks.items():
        zygote = shared_zygote(preloads(sources[name]), isolated)
        with timed(phases, "zygote start"):
            zygote.ensure_started()
        cell_limits = job.cell_limits.of(name) if job.cell_limits else None
        with timed(phases, "clean re-run"):
            verdicts[name] = clean_rerun.clean_rerun(notebook, sources[name], job.limits, zygote, cell_limits)
    return verdicts


def timeout_reason(job: GradeJob, notebook: str, test: str, message: str) -> str:
    """A kernel-run failure message, with the limit a cell that timed out ran into."""
    if not message.startswith("CellTimeoutError") or job.cell_limits is None:
        return message
    return f"CellTimeoutError: no answer within the cell's limit ({job.cell_limits.describe(notebook, test)})"


def award(job: GradeJob, result: SubmissionResult, kernel: KernelRun, clean: dict[str, dict[str, dict]]) -> None:
    """Each test's score and reason: the kernel's score unless the clean re-run failed it.

    When the kernel run did not finish, a test scores what the clean re-run gives it.
    """
    messages = {name: failure_messages(notebook) for name, notebook in kernel.autograded.items()}
    for test in result.tests:
        verdict = clean.get(test.notebook, {}).get(test.grade_id)
        test.clean_passed = None if verdict is None else verdict["passed"]
        if not kernel.finished:
            test.kernel_score = 0.0
            test.score = test.max_score if test.clean_passed else 0.0
            why = verdict["message"] if verdict else "no result"
            test.message = "" if test.clean_passed else f"clean re-run: {why}"
            continue
        test.kernel_score = min(test.max_score, kernel.scores.get((test.notebook, test.grade_id), 0.0))
        test.score = 0.0 if test.clean_passed is False else test.kernel_score
        message = messages.get(test.notebook, {}).get(test.grade_id, "")
        test.message = timeout_reason(job, test.notebook, test.grade_id, message)
        if test.kernel_score > 0 and test.clean_passed is False:
            test.message = f"clean re-run: {verdict['message']}"
            result.flags.append(f"{test.notebook}: {test.grade_id} passed in the student's kernel but failed "
                                f"in the clean re-run ({verdict['message'][:200]})")  # fmt: skip


def settle_status(job: GradeJob, result: SubmissionResult, kernel: KernelRun, problems: list[str]) -> None:
    """The submission's status and the reason an instructor reads in the export."""
    rescued = "; tests scored by the clean re-run" if any(t.clean_passed is not None for t in result.tests) else ""
    if kernel.outcome.timed_out:
        result.status = Status.TIMED_OUT
        limit = job.limits.wall_seconds
        result.reason = f"the kernel run stopped after the {limit:.0f} s limit per submission{rescued}"
    elif kernel.scores is None:
        result.status = Status.CRASHED
        result.reason = f"nbgrader saved no grades ({last_error(kernel.outcome.output_tail)}){rescued}"
    elif result.flags:
        result.status = Status.FLAGGED
        result.reason = f"{len(result.flags)} finding(s) of the tamper check"
    if problems:
        result.reason = "; ".join(filter(None, [result.reason, *problems]))


def last_error(log: str) -> str:
    """The most telling line of an autograde log: the last exception that is not nbgrader's summary."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line for line in lines if ERROR_LINE.match(line) and "NbGraderException" not in line]
    if errors:
        return errors[-1][:300]
    return lines[-1][:300] if lines else "no output (killed)"


def grade_submission(job: GradeJob) -> SubmissionResult:
    """Grade one submission; never raises for anything the submission does."""
    start = time.monotonic()
    result = SubmissionResult(job.assignment, job.student, Status.GRADED, digest=folder_digest(job.submission))
    with timed(result.phases, "read and scan"):
        cells = job.cells or gradebook.grade_cells(job.template_db, job.assignment)
    result.tests = [TestResult(c.notebook, c.grade_id, c.max_score) for c in cells if c.autograded]
    with timed(result.phases, "read and scan"):
        notebooks, problems = read_notebooks(job, expected_notebooks(cells), result)
    if not notebooks:
        result.status = Status.UNREADABLE if any("unreadable" in p for p in problems) else Status.MISSING
        result.reason = "; ".join(problems)
    else:
        with timed(result.phases, "read and scan"):
            folder = source_notebook(job.assignment, job.root).parent
            sources = {name: nbformat.read(folder / f"{name}.ipynb", as_version=4) for name in notebooks}
            repair_and_scan(job, notebooks, sources, result)
        kernel = run_in_kernel(job, notebooks, sources, result.phases)
        with timed(result.phases, "keep autograded"):
            keep_autograded(kernel.autograded, job)
        clean = rerun_cleanly(job, notebooks, sources, kernel, result.phases)
        award(job, result, kernel, clean)
        settle_status(job, result, kernel, problems + kernel.problems)
    result.seconds = time.monotonic() - start
    return result
