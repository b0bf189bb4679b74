"""The phase table of ``grade --profile`` and the benchmark."""

from autograder.pipeline.commands.profile import mean_phases, overhead, phase_table
from autograder.pipeline.storage.results import Status, SubmissionResult


def result(student: str, status: Status = Status.GRADED, **phases: float) -> SubmissionResult:
    return SubmissionResult("01_attention", student, status, phases={k.replace("_", " "): v for k, v in phases.items()})


def test_the_table_averages_each_phase_over_the_jobs_that_ran_and_names_the_overhead() -> None:
    results = [
        result("ann", zygote_start=6.0, merge=0.5),
        result("bob", merge=0.3, **{"kernel: cells": 2.0}),
        result("cat", Status.MISSING),  # nothing ran
    ]
    phases = mean_phases(results)
    assert phases["zygote start"] == 3.0 and phases["merge"] == 0.4 and phases["kernel: cells"] == 1.0
    assert overhead(phases) == 3.4  # the cells are the notebook's own compute
    header, row = phase_table(results, {"01_attention": 1.5})
    assert "overhead" in header and "reference" in header
    assert row.split()[:2] == ["01_attention", "2"] and row.split()[-2:] == ["3.40", "1.50"]
