"""tfcourse.measure: the timing and memory figures of notebook 07."""

import torch

from tfcourse.measure import milliseconds, peak_memory, threads


def test_peak_memory_counts_what_a_call_creates_and_not_its_inputs() -> None:
    x = torch.ones(1024, 1024)  # 4 MiB, made before the call: not counted
    report = peak_memory(lambda: (x * 2) * 3)  # two 4 MiB results, the first freed after the second is made
    assert 8 <= report.mebibytes <= 8.5, report.mebibytes
    assert "mul" in report.operators


def test_threads_restores_the_previous_count_and_timing_is_positive() -> None:
    before = torch.get_num_threads()
    with threads(1):
        assert torch.get_num_threads() == 1
        assert milliseconds(lambda: torch.ones(64, 64) @ torch.ones(64, 64), repeats=3) > 0
    assert torch.get_num_threads() == before
