"""What ``grade`` does before its first job: the zygotes start side by side, while the assignment is defined; and
what a worker's runner keeps of them from job to job."""

import subprocess
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from sqlalchemy import text

from autograder.course.course import Course
from autograder.course.paths import sqlite_url
from autograder.course.settings import source_notebook
from autograder.isolated import alembic_head
from autograder.launch.zygote import start_together
from autograder.pipeline.commands import grade as grade_module
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.runner import JobZygotes, Runner
from autograder.pipeline.storage import gradebook
from autograder.pipeline.storage.results import Status, SubmissionResult
from tests.support.course import ThrowawayCourse


class RecordingZygote:
    """Stands for a Zygote: records when it is launched and when it is waited for."""

    def __init__(self, name: str, log: list[tuple[str, str]], running: bool = False) -> None:
        self.name, self.log, self.running = name, log, running

    def stop(self) -> None:
        pass

    def launch(self) -> None:
        self.log.append(("launch", self.name))

    def wait_ready(self) -> None:
        self.log.append(("ready", self.name))
        self.running = True


def test_zygotes_are_all_launched_before_any_is_waited_for() -> None:
    log: list[tuple[str, str]] = []
    zygotes = [RecordingZygote("kernels", log), RecordingZygote("nbgrader", log), RecordingZygote("clean", log, True)]
    start_together(zygotes)  # type: ignore[arg-type]
    assert log == [("launch", "kernels"), ("launch", "nbgrader"), ("ready", "kernels"), ("ready", "nbgrader")]
    start_together(zygotes)  # type: ignore[arg-type]
    assert len(log) == 4, "a running zygote is not started again"


def test_a_job_starts_the_clean_rerun_s_zygote_with_the_kernel_run_s_or_when_it_needs_it() -> None:
    log: list[tuple[str, str]] = []
    zygotes = JobZygotes(RecordingZygote("kernels", log), RecordingZygote("nbgrader", log),  # type: ignore[arg-type]
                         {"a": RecordingZygote("clean", log)})  # type: ignore[dict-item]
    phases: dict[str, float] = {}
    zygotes.start(phases, clean_rerun=False)  # a job that re-runs cleanly only where the kernel run did not finish
    assert log == [("launch", "kernels"), ("launch", "nbgrader"), ("ready", "kernels"), ("ready", "nbgrader")]
    zygotes.start(phases, kernel_run=False)  # and then it did not
    assert log[4:] == [("launch", "clean"), ("ready", "clean")], log
    assert "zygote start" in phases, f"the zygotes' start is a phase of the job's: {phases}"


def test_a_worker_s_runner_keeps_each_zygote_for_the_next_job_and_stops_them_all(tmp_path: Path) -> None:
    runner = Runner()
    sources = {"01_attention": nbformat.read(source_notebook("01_attention"), 4)}
    job = GradeJob(Course(tmp_path), "01_attention", "ada", tmp_path, tmp_path)
    first = runner.zygotes(job, sources)
    assert runner.zygotes(job, sources) == first, "a worker's next job of the notebook runs in the same zygotes"
    held = [first.kernels, first.nbgrader, first.clean["01_attention"]]
    assert len(set(map(id, held))) == len(runner.held) == 3, f"the kernels', nbgrader's, the clean re-run's: {held}"
    assert first.kernels.listen and "torch" in first.clean["01_attention"].preload
    assert first.nbgrader.sandbox is not None and first.nbgrader.sandbox.writable == (first.kernels.scratch,)
    runner.stop()
    assert not runner.held and not any(zygote.scratch.exists() for zygote in held), "stopped zygotes leave no scratch"


def test_a_new_gradebook_is_a_copy_of_the_template(throwaway_course: ThrowawayCourse, monkeypatch) -> None:
    course = throwaway_course("01_attention", release=False)
    template = gradebook.template_gradebook(course, "01_attention")

    def no_nbgrader(*args: object) -> None:
        raise AssertionError("a gradebook that does not exist yet is the template's copy: nbgrader is not needed")

    monkeypatch.setattr(gradebook, "define_assignment", no_nbgrader)
    gradebook.ensure_defined(course, "01_attention")
    assert gradebook.grade_cells(course.grading.gradebook, "01_attention") == gradebook.grade_cells(
        template, "01_attention"
    )


class InlineExecutor(Executor):
    """Runs each task as it is submitted, so that the order of the tasks is the order of the calls."""

    def submit(self, fn: Callable, /, *args: object, **kwargs: object) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # handed to the caller, as a real executor does
            future.set_exception(error)
        return future


@pytest.mark.parametrize("students", [("ada", "bob"), ("ada",)], ids=["two jobs", "one job"])
def test_every_busy_worker_starts_its_zygotes_before_the_assignment_is_defined(
    students: tuple[str, ...], throwaway_course: ThrowawayCourse, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = throwaway_course("01_attention")
    for student in students:
        folder = course.grading.submitted(student, "01_attention")
        folder.mkdir(parents=True)
        nbformat.write(nbformat.read(course.release_notebook("01_attention"), 4), folder / "01_attention.ipynb")
    log: list[str] = []

    def record(event: str, returns: object = None) -> Callable:
        def step(*args: object, **kwargs: object) -> object:
            log.append(event)
            return returns(*args) if callable(returns) else returns

        return step

    def result(job: GradeJob) -> SubmissionResult:
        return SubmissionResult(job.assignment, job.student, Status.MISSING)  # nothing to merge

    monkeypatch.setattr(grade_module, "warm_up", record("warm up"))
    monkeypatch.setattr(gradebook, "template_gradebook", record("define", Path("unused.db")))
    monkeypatch.setattr(gradebook, "ensure_defined", record("define"))
    monkeypatch.setattr(gradebook, "grade_cells", record("read cells", []))
    monkeypatch.setattr(grade_module, "time_reference", record("reference", {}))
    monkeypatch.setattr(grade_module, "grade_submission", record("job", result))
    grade_module.grade(course, grade_module.GradeOptions(jobs=2, sandbox=False, progress=False), InlineExecutor())
    warm_ups = ["warm up"] * len(students)  # two workers, but no more warm-ups than jobs
    assert log == [*warm_ups, "define", "define", "read cells", "reference", *["job"] * len(students)]


def test_the_in_process_alembic_head_is_nbgrader_s_own() -> None:
    """The revision nbgrader's ``alembic heads`` subprocess prints is the one read in-process."""
    assert alembic_head.alembic_head() == alembic_head.NBGRADER_OWN()


def test_a_new_gradebook_is_stamped_without_a_subprocess(tmp_path: Path, monkeypatch) -> None:
    def no_subprocess(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("nbgrader ran `alembic heads` in a subprocess")

    monkeypatch.setattr(subprocess, "check_output", no_subprocess)
    with Gradebook(sqlite_url(tmp_path / "gradebook.db")) as book:
        stamped = book.db.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    assert stamped == alembic_head.alembic_head()
