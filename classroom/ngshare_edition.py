"""The Chinese edition on the ngshare exchange: released inside the assignment, fetched in the English one's place.

ngshare stores an assignment as a list of files, each with its path. Releasing (``EditionRelease``) uploads the
English release as ngshare-exchange does, and each translated release (``notebooks_zh/<assignment>/``, as
:class:`classroom.fetch_edition.EditionRelease` reads it) under ``.editions/<language>/`` in the same assignment:
nothing to serve beside ngshare, so it works wherever ngshare does (one machine or Kubernetes). Fetching
(``EditionFetch``) never writes ``.editions/``; for a student of the Chinese edition (``c.EditionFetch.edition``,
else the roster's), the Chinese notebook replaces each notebook this fetch created, never one the student had.
The Assignments tab's list (``EditionList``) and the submit's check leave ``.editions/`` out.

The classes are made on first use, as ``ngshare_exchange`` is imported only where the hub's settings name it
(its import reads the user's name). They keep the filesystem hub's class names, so that a student's own
setting, ``c.EditionFetch.edition``, is the same on both hubs.
"""

import base64
import json
import os
from pathlib import Path

from classroom.fetch_edition import EDITIONS_FOLDER, EditionChoice
from tfcourse.registry import translated_releases

EDITION_PREFIX = f"{EDITIONS_FOLDER}/"  # the path every translated file has in the ngshare assignment


def is_edition_path(path: str) -> bool:
    """A path of an ngshare assignment's file that belongs to a translated edition."""
    return path.replace(os.sep, "/").startswith(EDITION_PREFIX)


def encoded_editions(course_root: str, assignment: str, ignore) -> list[dict[str, str]]:
    """Each translated release's files of ``assignment``, as ngshare-exchange encodes a file, under ``.editions/``."""
    files = []
    for language, folder in translated_releases().items():
        source = Path(course_root) / folder / assignment
        if not source.is_dir():
            continue
        for path in sorted(source.rglob("*")):
            relative = path.relative_to(source)
            if not path.is_file() or path.is_symlink() or ignore(str(path.parent), path.name, path.stat().st_size):
                continue
            content = base64.b64encode(path.read_bytes()).decode()
            files.append({"path": f"{EDITION_PREFIX}{language}/{relative.as_posix()}", "content": content})
    return files


def __getattr__(name: str) -> type:
    if name not in {"EditionRelease", "EditionFetch", "EditionList"}:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ngshare_exchange import ExchangeFetchAssignment, ExchangeList, ExchangeReleaseAssignment

    class EditionRelease(ExchangeReleaseAssignment):
        """ngshare-exchange's release, with each translated release of the assignment inside it."""

        def encode_dir(self, src_dir, ignore=None) -> dict[str, str]:
            encoded = super().encode_dir(src_dir, ignore)
            editions = encoded_editions(self.coursedir.root, self.coursedir.assignment_id, self.ignore_patterns())
            if editions:
                encoded["files"] = json.dumps([*json.loads(encoded["files"]), *editions])
                languages = sorted({entry["path"].split("/")[1] for entry in editions})
                self.log.info("Released the %s edition too", ", ".join(languages))
            return encoded

    class EditionFetch(EditionChoice, ExchangeFetchAssignment):
        """ngshare-exchange's fetch; for a student of a translated edition, its notebooks in the English ones' place."""

        def do_copy(self, files: list[dict[str, str]]) -> None:
            dest = Path(self.dest_path)
            had = {notebook.name for notebook in dest.glob("*.ipynb")} if dest.is_dir() else set()
            super().do_copy([entry for entry in files if not is_edition_path(entry["path"])])
            language = self.translated_edition()
            if language is not None:
                prefix = f"{EDITION_PREFIX}{language}/"
                translated = {entry["path"][len(prefix):]: entry["content"] for entry in files
                              if entry["path"].startswith(prefix)}
                notebooks = {name: base64.b64decode(content) for name, content in translated.items()
                             if "/" not in name and name.endswith(".ipynb")}
                self.place_edition(dest, had, language, notebooks)

    class EditionList(ExchangeList):
        """ngshare-exchange's list, without the translated notebooks among a released assignment's notebooks."""

        def _get_notebooks(self, course_id, assignment_id):
            url = f"/assignment/{course_id}/{assignment_id}"
            response = self.ngshare_api_get(url, {"list_only": "true"})
            if response is None:
                return None
            return [os.path.splitext(os.path.split(entry["path"])[1])[0] for entry in response["files"]
                    if not is_edition_path(entry["path"])]

    made = {"EditionRelease": EditionRelease, "EditionFetch": EditionFetch, "EditionList": EditionList}
    globals().update(made)
    return made[name]
