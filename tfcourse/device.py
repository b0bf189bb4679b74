"""Pick the best available device at run time and make runs repeatable."""

import os
import random

import numpy as np
import torch

# The setting that opts in to Apple's GPU (``mps``): "1" (or true, yes, on) uses it where PyTorch offers it; unset,
# the notebooks run on the CPU of a Mac. Off by default: MPS has known problems that touch these notebooks
# (docs/students.md, "Apple silicon").
MPS_ENV_VAR = "TFCOURSE_MPS"


def mps_chosen() -> bool:
    """True when the student opted in to ``mps`` (``TFCOURSE_MPS``)."""
    return os.environ.get(MPS_ENV_VAR, "").strip().lower() in {"1", "true", "yes", "on"}


def get_device() -> torch.device:
    """Return ``cuda`` if a GPU is usable, else ``mps`` when opted in (``TFCOURSE_MPS=1``) and usable, else ``cpu``.

    Notebooks call this once and pass the result around: no cell hard-codes a
    device, so the same notebook runs on a laptop and on a GPU server.
    """
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps_chosen() and mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def seed_everything(seed: int = 0) -> None:
    """Seed Python, NumPy and PyTorch (all devices) so that reruns give the same numbers."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
