"""The registry of the course's editions, read from ``tfcourse/editions.toml``: what each edition is called,
where its student release, reader pages and syllabus go, and the font its figures need.

Only the standard library, so that the Makefile can ask it before anything is installed:

    python3 -P tfcourse/registry.py translated    # the translated editions' codes, one line
    python3 -P tfcourse/registry.py release CODE  # that edition's student release folder

Each edition's translations follow one layout, named here once: ``editions/<code>/`` (the notebooks'
Markdown and the glossary) and a ``<code>/`` folder of ``.po`` catalogs under each of :data:`CATALOGS`.
"""

import sys
import tomllib
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path

REGISTRY = Path(__file__).with_name("editions.toml")
# The folders (from the repository's root) holding a ``<code>/`` folder of ``.po`` catalogs per edition: the
# helper package's messages, the hidden tests' (kept with the grader), the feedback page's and the hub's.
CATALOGS = ("tfcourse/locale", "autograder/locale", "autograder/pipeline/locale", "classroom/locale")


@dataclass(frozen=True)
class Edition:
    code: str
    name: str
    release: str
    book: str
    syllabus: str
    join: str
    font: str = ""
    font_module: str = ""


@cache
def editions(path: Path = REGISTRY) -> dict[str, Edition]:
    """Every edition, the source first, by code."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    known = {field.name for field in fields(Edition)}
    tables = {code: table for code, table in data.items() if isinstance(table, dict)}
    order = sorted(tables, key=lambda code: code != data["source"])
    return {code: Edition(code=code, **{k: v for k, v in tables[code].items() if k in known}) for code in order}


def source() -> str:
    """The code of the edition every other one is translated from (English)."""
    return next(iter(editions()))


def translated() -> tuple[str, ...]:
    """The codes of the translated editions."""
    return tuple(code for code in editions() if code != source())


def releases() -> tuple[str, ...]:
    """Every edition's student release folder, the source's first."""
    return tuple(edition.release for edition in editions().values())


def translated_releases() -> dict[str, str]:
    """Each translated edition's student release folder, by code."""
    return {code: editions()[code].release for code in translated()}


def main(argv: list[str]) -> int:
    if argv[:1] == ["translated"]:
        print(" ".join(translated()))
    elif argv[:1] == ["release"] and len(argv) == 2 and argv[1] in editions():
        print(editions()[argv[1]].release)
    else:
        print(f"usage: python3 -P {Path(__file__).name} translated | release CODE", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
