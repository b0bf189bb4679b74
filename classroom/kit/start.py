"""Set up this kit and open the course in JupyterLab: ``python3 start.py`` (on Windows: ``py start.py``).

The first run makes a virtual environment in ``.venv`` here, installs the pinned packages into it
(``requirements.txt``; ``constraints.txt`` fixes the version of everything they bring along) and the
course's helper package from this folder (``tfcourse``, editable, so that it finds the data sample in
``data/``), then opens JupyterLab on this folder. Later runs install again only when one of those files
changes. ``--setup-only`` sets up and does not open JupyterLab.

What differs between Windows, macOS and Linux is decided by the functions below from the machine's facts
(:class:`Machine`), so that a test can ask them for each platform: the command that runs Python
(``py``, ``python3``), where the virtual environment keeps it (``Scripts\\python.exe``, ``bin/python``), and
where PyTorch comes from: on Linux without an NVIDIA GPU, PyTorch's CPU build (``torch==<pin>+cpu`` from
PyTorch's CPU index, its dependencies from PyPI), since the Linux wheel on PyPI brings gigabytes of CUDA
libraries; elsewhere, pip's own index.

It speaks the student's language: Chinese when ``TFCOURSE_EDITION`` is ``zh`` or the system's language is
Chinese, English otherwise. It imports nothing outside Python's standard library: it runs before anything is
installed.
"""

from __future__ import annotations

import argparse
import hashlib
import locale
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

KIT = Path(__file__).resolve().parent
VENV = KIT / ".venv"
STAMP = VENV / ".installed"  # the digest of the files below, once everything they name is installed
PINNED = ("requirements.txt", "constraints.txt", "requirements-removed.txt", "pyproject.toml")
OLDEST_PYTHON = (3, 11)
TORCH_PIN = "requirements.txt"  # the file whose torch==... line names the PyTorch to install
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Where PyTorch comes from, when set: an index URL, or empty for pip's own index (and its configuration).
TORCH_INDEX_VARIABLE = "TFCOURSE_TORCH_INDEX"
EDITION_VARIABLE = "TFCOURSE_EDITION"  # the course's language setting (tfcourse/language.py)

MESSAGES = {
    "needs_python": "本课程需要 Python 3.11 或更新版本；当前是 Python {version}。",
    "making_venv": "正在 {venv} 中建立虚拟环境",
    "torch_cpu": "正在安装 PyTorch 的 CPU 版本（没有找到 NVIDIA GPU：不下载 CUDA 库）",
    "installing": "正在安装课程所需的软件包（第一次会下载 PyTorch 和 JupyterLab，需要几分钟）",
    "failed": "start.py：这一步失败了：{command}\n请先解决它打印的问题，然后再运行 `{again}`。",
    "description": "在这里的 .venv 中安装课程，然后打开 JupyterLab。",
    "setup_only": "只安装，不打开 JupyterLab",
}
ENGLISH = {
    "needs_python": "The course needs Python 3.11 or newer; this is Python {version}.",
    "making_venv": "Making a virtual environment in {venv}",
    "torch_cpu": "Installing PyTorch's CPU build (no NVIDIA GPU found: no CUDA libraries to download)",
    "installing": "Installing the course's packages (the first time this downloads PyTorch and JupyterLab: minutes)",
    "failed": "start.py: this step failed: {command}\nFix what it printed, then run `{again}` again.",
    "description": "Set up the course in .venv here, then open JupyterLab.",
    "setup_only": "set up, do not open JupyterLab",
}


@dataclass(frozen=True)
class Machine:
    """The facts start.py decides from."""

    system: str  # sys.platform: "win32", "darwin", "linux"
    machine: str  # platform.machine(): "AMD64", "arm64", "x86_64", "aarch64"
    nvidia: bool  # nvidia-smi (NVIDIA's driver tool) is on PATH

    @classmethod
    def here(cls) -> Machine:
        return cls(sys.platform, platform.machine(), shutil.which("nvidia-smi") is not None)

    @property
    def windows(self) -> bool:
        return self.system == "win32"


def chinese(environment: dict[str, str], system_language: str | None) -> bool:
    """True when the student's language is Chinese: the course's setting, else the system's language."""
    chosen = environment.get(EDITION_VARIABLE, "").strip()
    if chosen:
        return chosen == "zh"
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if environment.get(name):
            return environment[name].lower().startswith("zh")
    return (system_language or "").lower().startswith(("zh", "chinese"))


def say(key: str, **fields: object) -> str:
    """A message in the student's language."""
    catalog = MESSAGES if chinese(dict(os.environ), locale.getlocale()[0]) else ENGLISH
    return catalog[key].format(**fields)


def python_command(machine: Machine) -> str:
    """The command that runs Python 3 there: the launcher ``py`` on Windows, ``python3`` elsewhere."""
    return "py" if machine.windows else "python3"


def venv_python(machine: Machine, venv: PurePath) -> PurePath:
    """The Python of the virtual environment ``venv``: ``Scripts\\python.exe`` on Windows, ``bin/python`` elsewhere."""
    if machine.windows:
        return PureWindowsPath(venv) / "Scripts" / "python.exe"
    return PurePosixPath(venv) / "bin" / "python"


def torch_index(machine: Machine, environment: dict[str, str]) -> str | None:
    """Where PyTorch comes from: ``TFCOURSE_TORCH_INDEX`` when set (empty: pip's own index); else PyTorch's CPU
    index on Linux without an NVIDIA GPU, and pip's own index (None) elsewhere."""
    if TORCH_INDEX_VARIABLE in environment:
        return environment[TORCH_INDEX_VARIABLE].strip() or None
    if machine.system.startswith("linux") and not machine.nvidia:
        return CPU_INDEX
    return None


def torch_requirement(requirements: str) -> str:
    """The ``torch==...`` line of the kit's requirements."""
    return next(line.split("#")[0].strip() for line in requirements.splitlines() if line.startswith("torch=="))


def install_commands(
    machine: Machine, python: PurePath, environment: dict[str, str], kit: Path = KIT
) -> list[list[str]]:
    """The pip commands that set ``kit`` up, in order: PyTorch first where it comes from an index of its own
    (the requirements then find it installed), then the pinned packages, the helper package, and the removals."""
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    commands = []
    index = torch_index(machine, environment)
    if index is not None:
        torch = torch_requirement((kit / TORCH_PIN).read_text())
        if index == CPU_INDEX:  # only that index has this version's CPU build; PyPI has its dependencies
            torch += "+cpu"
        commands.append([*pip, "install", torch, "--extra-index-url", index, "-c", "constraints.txt"])
    commands += [
        [*pip, "install", "-r", "requirements.txt", "-c", "constraints.txt"],
        [*pip, "install", "--no-deps", "--editable", "."],
        # packages that only slow every start of Jupyter down (see the file); absent ones are skipped
        [*pip, "uninstall", "--quiet", "--yes", "-r", "requirements-removed.txt"],
    ]
    return commands


def pins_digest() -> str:
    digest = hashlib.sha256()
    for name in PINNED:
        digest.update((KIT / name).read_bytes())
    return digest.hexdigest()


def run(command: list[str], machine: Machine) -> None:
    """Run ``command`` in the kit's folder; stop with a plain message if it fails."""
    if subprocess.run(command, cwd=KIT).returncode != 0:
        sys.exit(say("failed", command=" ".join(command), again=f"{python_command(machine)} start.py"))


def set_up(machine: Machine) -> Path:
    """The kit's environment, installed (again) when a requirements file changed; its Python."""
    python, digest = Path(venv_python(machine, VENV)), pins_digest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return python
    if not python.exists():
        print(say("making_venv", venv=VENV))
        run([sys.executable, "-m", "venv", str(VENV)], machine)
    commands = install_commands(machine, python, dict(os.environ))
    for command in commands:
        if CPU_INDEX in command:
            print(say("torch_cpu"))
        elif "-r" in command and "requirements.txt" in command:
            print(say("installing"))
        run(command, machine)
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
        sys.exit(say("needs_python", version=sys.version.split()[0]))
    parser = argparse.ArgumentParser(description=say("description"))
    parser.add_argument("--setup-only", action="store_true", help=say("setup_only"))
    setup_only = parser.parse_args().setup_only
    machine = Machine.here()
    python = set_up(machine)
    if not setup_only:
        sys.exit(open_lab(python))


if __name__ == "__main__":
    main()
