"""Pick the best available device at run time and make runs repeatable."""

import random

import numpy as np
import torch


def get_device() -> torch.device:
    """Return ``cuda`` if a GPU is usable, else ``mps`` (Apple silicon), else ``cpu``.

    Notebooks call this once and pass the result around: no cell hard-codes a
    device, so the same notebook runs on a laptop and on a GPU server.
    """
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def seed_everything(seed: int = 0) -> None:
    """Seed Python, NumPy and PyTorch (all devices) so that reruns give the same numbers."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
