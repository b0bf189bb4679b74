"""One worker's job runner: it owns the worker's zygotes and runs each job's steps in them.

:class:`Runner` starts the three zygotes a job runs in (the kernels', nbgrader's, the clean re-run's:
docs/maintainers.md, the grader's phases), keeps them from job to job (an executor runs many jobs per
worker process or thread) and stops them when the worker ends; each step gets the zygotes it runs in.
"""

import multiprocessing.util
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

import nbformat
from nbformat import NotebookNode

from autograder.course.notebook_code import notebook_modules
from autograder.launch.zygote import SandboxSpec, Zygote, start_together
from autograder.pipeline.job.cell_limits import cell_seconds
from autograder.pipeline.job.clean_rerun import needs_clean_rerun, rerun_cleanly
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.kernel_run import keep_autograded, run_in_kernel
from autograder.pipeline.job.submission_files import expected_notebooks, read_notebooks, repair_and_scan
from autograder.pipeline.job.verdict import award, settle_status
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import Status, SubmissionResult, TestResult, folder_digest, timed

NBGRADER_PRELOAD = ("autograder.isolated.autograde_child",)  # what the autograde zygote imports once
# And the kernel zygote, with the notebooks' own imports: what a kernel's start-up would import in
# every forked kernel otherwise (its debugger, which loads debugpy, pdb, pydoc: 0.1-0.2 s a kernel).
KERNEL_PRELOAD = (
    "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.debugger",
    "IPython.core.debugger", "IPython.core.completerlib", "IPython.core.oinspect", "pydoc", "pdb",
)
# Modules that a notebook's modules import lazily, on first use, in seconds. A cell stopped at its limit
# while importing one would leave it half-initialised for every later cell: the zygotes import them up front.
LAZY_IMPORTS = {"torch": ("torch._dynamo",)}


def preloads(*sources: NotebookNode) -> tuple[str, ...]:
    """What a zygote for these notebooks imports once: their own imports and what those import lazily."""
    modules = tuple(dict.fromkeys(module for source in sources for module in notebook_modules(source)))
    return modules + tuple(lazy for module in modules for lazy in LAZY_IMPORTS.get(module, ()))


@dataclass(frozen=True)
class JobZygotes:
    """The zygotes of one job: the kernel run's two, and the clean re-run's by notebook."""

    kernels: Zygote
    nbgrader: Zygote
    clean: dict[str, Zygote]

    def start(self, phases: dict[str, float], kernel_run: bool = True, clean_rerun: bool = True) -> None:
        """Start the kernel run's zygotes, the clean re-run's, or both, side by side (their imports overlap on the
        cores): one already running is left as it is, one that a job killed is started again."""
        chosen = [*((self.kernels, self.nbgrader) if kernel_run else ()), *(self.clean.values() if clean_rerun else ())]
        with timed(phases, "zygote start"):
            start_together(chosen)


class Runner:
    """One worker's zygotes, kept by what they import and how they are sandboxed, and stopped when the worker ends."""

    def __init__(self) -> None:
        self.held: dict[tuple, Zygote] = {}
        # Runs at exit in the main process and in multiprocessing workers alike (atexit does not run there).
        multiprocessing.util.Finalize(None, self.stop, exitpriority=10)

    def zygote(self, preload: tuple[str, ...], sandbox: SandboxSpec | None, listen: bool = False) -> Zygote:
        key = (preload, sandbox, listen)
        if key not in self.held:
            self.held[key] = Zygote(preload, sandbox, listen)
        return self.held[key]

    def zygotes(self, job: GradeJob, sources: dict[str, NotebookNode]) -> JobZygotes:
        """This worker's zygotes for ``job``, whose source notebooks are ``sources`` (not started here)."""
        readable = tuple(job.course.data_folders())
        # Neither the kernels nor nbgrader have a network: they talk through Unix sockets in the kernels' scratch.
        sandbox = SandboxSpec(readable) if job.sandbox else None
        kernels = self.zygote(KERNEL_PRELOAD + preloads(*sources.values()), sandbox, listen=True)
        # nbgrader writes only where the kernels write, and in its own scratch: a file the student's
        # code turns into a link to the gradebook cannot make it write there.
        nbgrader_sandbox = SandboxSpec(readable, writable=(kernels.scratch,)) if job.sandbox else None
        clean = {name: self.zygote(preloads(source), sandbox) for name, source in sources.items()}
        return JobZygotes(kernels, self.zygote(NBGRADER_PRELOAD, nbgrader_sandbox), clean)

    def stop(self) -> None:
        for zygote in self.held.values():
            zygote.close()
        self.held.clear()


_local = threading.local()


def runner() -> Runner:
    """This thread's runner (an executor's worker may be a thread: each keeps zygotes of its own)."""
    if not hasattr(_local, "runner"):
        _local.runner = Runner()
    return _local.runner


def source_notebooks(job: GradeJob, names: Iterable[str]) -> dict[str, NotebookNode]:
    folder = job.course.source_folder(job.assignment)
    return {name: nbformat.read(folder / f"{name}.ipynb", as_version=4) for name in names}


def warm_up(job: GradeJob) -> None:
    """Start a worker's zygotes for ``job``'s assignment before its first job (``grade`` runs it as a task of its own,
    while it defines the assignment). It needs no gradebook: the notebooks are those of the source folder."""
    names = sorted(path.stem for path in job.course.source_folder(job.assignment).glob("*.ipynb"))
    runner().zygotes(job, source_notebooks(job, names)).start({}, clean_rerun=job.clean_rerun)


def time_reference(job: GradeJob) -> dict[str, dict[str, float]]:
    """``{notebook: {cell key: seconds}}`` of the reference answers in ``job.submission``, run as a submission is."""
    cells = job.cells or gradebook.grade_cells(job.template_db, job.assignment)
    scratch = SubmissionResult(job.assignment, job.student, Status.GRADED)
    notebooks, _ = read_notebooks(job, expected_notebooks(cells), scratch)
    zygotes = runner().zygotes(job, source_notebooks(job, notebooks))
    zygotes.start({}, clean_rerun=job.clean_rerun)  # the clean re-run's too, for this worker's next jobs
    kernel = run_in_kernel(job, zygotes.kernels, zygotes.nbgrader, notebooks, {})
    return {name: cell_seconds(notebook) for name, notebook in kernel.autograded.items()} if kernel.finished else {}


def grade_submission(job: GradeJob) -> SubmissionResult:
    """Grade one submission; never raises for anything the submission does."""
    start = time.monotonic()
    result = SubmissionResult(job.assignment, job.student, Status.GRADED, digest=folder_digest(job.submission))
    with timed(result.phases, "read and scan"):
        cells = job.cells or gradebook.grade_cells(job.template_db, job.assignment)
        result.tests = [TestResult(c.notebook, c.grade_id, c.max_score) for c in cells if c.autograded]
        notebooks, problems = read_notebooks(job, expected_notebooks(cells), result)
    if not notebooks:
        result.status = Status.UNREADABLE if any("unreadable" in p for p in problems) else Status.MISSING
        result.reason = "; ".join(problems)
    else:
        with timed(result.phases, "read and scan"):
            sources = source_notebooks(job, notebooks)
            repair_and_scan(job, notebooks, sources, result)
        zygotes = runner().zygotes(job, sources)
        zygotes.start(result.phases, clean_rerun=job.clean_rerun)
        kernel = run_in_kernel(job, zygotes.kernels, zygotes.nbgrader, notebooks, result.phases)
        with timed(result.phases, "keep autograded"):
            keep_autograded(kernel.autograded, job)
        clean = {}
        if needs_clean_rerun(job, kernel):
            zygotes.start(result.phases, kernel_run=False)
            clean = rerun_cleanly(job, zygotes.clean, notebooks, sources, result.phases)
        award(job, result, kernel, clean)
        settle_status(job, result, kernel, problems + kernel.problems)
    result.seconds = time.monotonic() - start
    return result
