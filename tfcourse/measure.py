"""Time and peak memory of one call, on the CPU or a GPU, for the notebooks' benchmark figures.

``milliseconds(fn)`` is the median wall time of a few calls after a warm-up (on a GPU it waits
for the GPU before reading the clock: :func:`synchronize`). ``peak_memory(fn)`` is the most
memory that the tensors created during one call held at any moment, the result included and
the inputs not: on CUDA it is the caching allocator's peak; elsewhere (the CPU keeps no
allocator statistics) it watches every operator the call runs (a ``TorchDispatchMode``) and
adds up the storages they create until they are freed. Buffers a fused kernel allocates inside
itself are invisible to that count, which is why :func:`peak_memory` also returns the names of
the operators it saw. ``threads(n)`` runs a block with ``n`` CPU threads: small operations time
more steadily on one thread, above all on a machine that other jobs share.
``duration(seconds)`` writes a training time for a printout: "0.8 s", "42 s", "3.7 min (222 s)".
"""

import statistics
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


def synchronize(device: torch.device | str | None) -> None:
    """Wait until the GPU (CUDA or Apple's MPS) has finished its queued work; nothing to wait for on a CPU."""
    kind = torch.device(device).type if device is not None else "cpu"
    if kind == "cuda":
        torch.cuda.synchronize(device)
    elif kind == "mps":
        torch.mps.synchronize()


def duration(seconds: float) -> str:
    """A wall time as a reader would say it: seconds under two minutes, then minutes with the seconds.

    A short fast-mode run reads "0.8 s", not "0 s (0.0 min)".
    """
    if seconds < 0:
        raise ValueError(f"a duration cannot be negative, got {seconds} s")
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min ({seconds:.0f} s)"


def milliseconds(
    fn: Callable[[], object], repeats: int = 5, warmup: int = 1, device: torch.device | str | None = None
) -> float:
    """Median wall time of ``fn()`` in milliseconds over ``repeats`` calls, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        synchronize(device)
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


@contextmanager
def threads(count: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(count)``, then restore the previous number."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class _StorageTracker(TorchDispatchMode):
    """Adds up the storages created by the operators run inside it, and when each is freed."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, int] = {}  # data pointer -> bytes
        self.current = 0
        self.peak = 0
        self.operators: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = str(func.overloadpacket.__name__)
        if name not in self.operators:
            self.operators.append(name)
        inputs = {
            t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)
        }
        for tensor in tree_flatten(result)[0]:
            if isinstance(tensor, torch.Tensor):
                self._track(tensor.untyped_storage(), inputs)
        return result

    def _track(self, storage: torch.UntypedStorage, inputs: set[int]) -> None:
        key, size = storage.data_ptr(), storage.nbytes()
        if size == 0 or key in self.live or key in inputs:  # empty, already counted, or a view of an input
            return
        self.live[key] = size
        self.current += size
        self.peak = max(self.peak, self.current)
        weakref.finalize(storage, self._free, key)

    def _free(self, key: int) -> None:
        self.current -= self.live.pop(key, 0)


@dataclass
class MemoryReport:
    """Peak bytes held by the tensors a call created, and the operators it ran (CPU only)."""

    peak_bytes: int
    operators: list[str] = field(default_factory=list)

    @property
    def mebibytes(self) -> float:
        return self.peak_bytes / 2**20


def peak_memory(fn: Callable[[], object], device: torch.device | str | None = None) -> MemoryReport:
    """Peak memory of the tensors created during one call of ``fn()`` (its result included)."""
    if device is not None and torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
        baseline = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        result = fn()
        torch.cuda.synchronize(device)
        peak = torch.cuda.max_memory_allocated(device) - baseline
        del result
        return MemoryReport(peak)
    tracker = _StorageTracker()
    with tracker:
        result = fn()
    del result
    return MemoryReport(tracker.peak, tracker.operators)
