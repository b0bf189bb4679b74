"""Set up this kit and open the course in JupyterLab: ``python3 start.py`` (on Windows: ``py start.py``).

The first run makes a virtual environment in ``.venv`` here, installs the pinned packages into it
(``requirements.txt``; ``constraints.txt`` fixes the version of everything they bring along) and the
course's helper package from this folder (``tfcourse``, editable, so that it finds the data sample in
``data/``), then opens JupyterLab on this folder. Later runs install again only when one of those files
changes. ``--setup-only`` sets up and does not open JupyterLab.

Each notebook speaks its edition's language (``notebooks/``: English, ``notebooks_zh/``: Chinese),
whichever folder it is opened from.
"""

import argparse
import hashlib
import os
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent
VENV = KIT / ".venv"
STAMP = VENV / ".installed"  # the digest of the files below, once everything they name is installed
PINNED = ("requirements.txt", "constraints.txt", "requirements-removed.txt", "pyproject.toml")
OLDEST_PYTHON = (3, 11)


def venv_python() -> Path:
    return VENV / "Scripts" / "python.exe" if os.name == "nt" else VENV / "bin" / "python"


def pins_digest() -> str:
    digest = hashlib.sha256()
    for name in PINNED:
        digest.update((KIT / name).read_bytes())
    return digest.hexdigest()


def run(command: list) -> None:
    """Run ``command`` in the kit's folder; stop with a plain message if it fails."""
    if subprocess.run(command, cwd=KIT).returncode != 0:
        sys.exit(f"start.py: this step failed: {' '.join(map(str, command))}\nFix what it printed, then run it again.")


def set_up() -> Path:
    """The kit's environment, installed (again) when a requirements file changed; its Python."""
    python, digest = venv_python(), pins_digest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return python
    if not python.exists():
        print(f"Making a virtual environment in {VENV}")
        run([sys.executable, "-m", "venv", str(VENV)])
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    print("Installing the course's packages (the first time this downloads PyTorch and JupyterLab: minutes)")
    run([*pip, "install", "-r", "requirements.txt", "-c", "constraints.txt"])
    run([*pip, "install", "--no-deps", "--editable", "."])
    # packages that only slow every start of Jupyter down (see the file); absent ones are skipped
    run([*pip, "uninstall", "--quiet", "--yes", "-r", "requirements-removed.txt"])
    STAMP.write_text(digest)
    return python


def open_lab(python: Path) -> int:
    """JupyterLab on the kit's folder, until it stops; its exit status."""
    command = [str(python), "-m", "jupyterlab", f"--ServerApp.root_dir={KIT}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # Jupyter refuses to run as root unless told to (containers)
    lab = subprocess.Popen(command, cwd=KIT)
    while True:
        try:
            return lab.wait()
        except KeyboardInterrupt:  # JupyterLab got the Ctrl+C too, and asks whether to stop
            continue


def main() -> None:
    if sys.version_info < OLDEST_PYTHON:
        sys.exit(f"The course needs Python 3.11 or newer; this is Python {sys.version.split()[0]}.")
    parser = argparse.ArgumentParser(description="Set up the course in .venv here, then open JupyterLab.")
    parser.add_argument("--setup-only", action="store_true", help="set up, do not open JupyterLab")
    setup_only = parser.parse_args().setup_only
    python = set_up()
    if not setup_only:
        sys.exit(open_lab(python))


if __name__ == "__main__":
    main()
