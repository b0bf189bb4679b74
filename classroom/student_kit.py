"""``python -m classroom.student_kit [--output DIR]``: the student kit, the zip a class gets instead of the repo.

The kit holds what a student needs and nothing an instructor keeps, under one folder
(``transformers-from-scratch-student-kit-<version>/``); what it holds: docs/instructors.md (the student kit). The
pins are the repository's ``requirements.txt``, with ``requirements-lock.txt`` as ``constraints.txt``; ``README.md``
and ``start.py`` come from ``classroom/kit/``. The builder refuses to write a kit that would hold a solution, a
hidden test or a reference answer (:mod:`classroom.kit_secrets`).
"""

import argparse
import json
import os
import string
import tomllib
import zipfile
from pathlib import Path

from autograder.course.graded_versions import project_version as version
from classroom.kit_secrets import refuse_leaks
from classroom.student_pins import STUDENT_PACKAGES, requirements  # noqa: F401 (STUDENT_PACKAGES: the kit's)
from tfcourse.registry import releases

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).resolve().parent / "kit"
DEFAULT_OUTPUT = REPO / "build" / "student-kit"
NAME = "transformers-from-scratch-student-kit"
FOLDERS = (*releases(), "tfcourse", "data/ag_news_sample")
FILES = ("data/README.md", "requirements-removed.txt")
LICENCES = ("LICENSE", "LICENSE-CONTENT")  # the code's and the prose's; each goes in when the repository has it
LEFT_OUT = {"__pycache__", ".ipynb_checkpoints"}
EXECUTABLE = {"start.py"}
ENTRY_TIME = (1980, 1, 1, 0, 0, 0)  # every entry's date, so that the same files make the same zip


def toml_value(value: object) -> str:
    """A TOML value: strings and lists as JSON writes them (valid TOML), tables inline."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }"
    return json.dumps(value)


def pyproject() -> str:
    """The repository's ``pyproject.toml`` cut down to the helper package: its build system, project and data."""
    settings = tomllib.loads((REPO / "pyproject.toml").read_text())
    tables = {
        "build-system": settings["build-system"],
        # the project but its entry points (the TLJH plugin's module is not in the kit)
        "project": {key: value for key, value in settings["project"].items() if key != "entry-points"},
        "tool.setuptools.packages.find": {"include": ["tfcourse*"]},
        "tool.setuptools.package-data": {"tfcourse": settings["tool"]["setuptools"]["package-data"]["tfcourse"]},
    }
    return "\n".join(
        f"[{name}]\n" + "".join(f"{key} = {toml_value(value)}\n" for key, value in table.items())
        for name, table in tables.items()
    )


def readme() -> str:
    return string.Template((TEMPLATES / "README.md").read_text()).substitute(version=version())


def kit_files() -> dict[str, bytes]:
    """Every file of the kit, by its path in the kit's folder."""
    files = {
        path.relative_to(REPO).as_posix(): path.read_bytes()
        for folder in FOLDERS
        for path in sorted((REPO / folder).rglob("*"))
        if path.is_file() and not LEFT_OUT & set(path.parts)
    }
    files.update({name: (REPO / name).read_bytes() for name in FILES})
    files.update({name: (REPO / name).read_bytes() for name in LICENCES if (REPO / name).is_file()})
    files["constraints.txt"] = (REPO / "requirements-lock.txt").read_bytes()
    files["requirements.txt"] = requirements().encode()
    files["pyproject.toml"] = pyproject().encode()
    files["README.md"] = readme().encode()
    files["start.py"] = (TEMPLATES / "start.py").read_bytes()
    return files


def write_zip(files: dict[str, bytes], path: Path, top: str) -> None:
    """``files`` under the folder ``top`` in the zip ``path``, written whole or not at all."""
    partial = path.with_name(path.name + ".part")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in sorted(files.items()):
            entry = zipfile.ZipInfo(f"{top}/{name}", date_time=ENTRY_TIME)
            entry.external_attr = (0o755 if name in EXECUTABLE else 0o644) << 16
            archive.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED)
    os.replace(partial, path)


def build(output: Path = DEFAULT_OUTPUT) -> Path:
    """Write the kit into ``output`` and return the zip's path; raise KitLeak if it would hold a secret.

    Every file of the kit that names the course's version names this one (the zip's folder, README.md,
    pyproject.toml, tfcourse's ``__version__``), and the kits of other versions in ``output`` are removed.
    """
    files = kit_files()
    refuse_leaks(files, REPO)
    top = f"{NAME}-{version()}"
    output.mkdir(parents=True, exist_ok=True)
    path = output / f"{top}.zip"
    write_zip(files, path, top)
    for older in output.glob(f"{NAME}-*.zip"):  # another version's kit beside it would be handed out by mistake
        if older != path:
            older.unlink()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help=f"folder (default: {DEFAULT_OUTPUT})")
    print(build(parser.parse_args().output))


if __name__ == "__main__":
    main()
