"""tfcourse.measure: the timing and memory figures of notebook 07."""

import pytest
import torch

from tfcourse.measure import duration, milliseconds, peak_memory, threads


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


def test_duration_says_short_times_in_seconds_and_long_ones_in_minutes():
    assert duration(0.04) == "0.0 s" and duration(0.8) == "0.8 s" and duration(9.94) == "9.9 s"
    assert duration(42.4) == "42 s" and duration(119.4) == "119 s"
    assert duration(222.0) == "3.7 min (222 s)"
    assert "min" not in duration(30) and "0.0 min" not in duration(1.2)
    with pytest.raises(ValueError):
        duration(-1.0)
