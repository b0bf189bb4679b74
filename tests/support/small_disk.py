"""A small tmpfs mounted for one test, to fill a disk for real: root only, and where mounting is allowed."""

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_disk(folder: Path, size: str) -> Iterator[Path]:
    """``folder`` (made empty if missing) as a tmpfs of ``size`` (``"4m"``) until the block ends; the test is
    skipped, with the reason, where this account may not mount one (not root, or a container without the right)."""
    if os.geteuid() != 0:
        pytest.skip("fills a tmpfs mounted for the test: mount is root only (CI runs as root)")
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"could not mount a tmpfs to fill (mount said: {mounted.stderr.strip()})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
