"""The Chinese edition on the hub's filesystem exchange: released beside the English notebook, fetched in its place.

The Chinese release (``notebooks_zh/``) has the English release's cells, grade ids and code, so the
class is graded, given feedback and exported as one (``tests/test_edition_grading.py``). Releasing an
assignment (:class:`EditionRelease`, the instructor's release in formgrader) also puts its Chinese
notebooks in ``outbound/.editions/zh/<assignment>/``: nbgrader lists ``outbound/*`` and checks a
hand-in against ``outbound/<assignment>/``, so neither sees them. Fetching (:class:`EditionFetch`, the
*Fetch* button of the Assignments tab and ``nbgrader fetch_assignment``) copies the English release as
nbgrader does, then, for a student whose edition is Chinese, the Chinese notebook over each notebook this
fetch created (a notebook the student already had, with their work in it, is never replaced).

A student's edition is their own setting, ``c.EditionFetch.edition = CODE`` (``tfcourse/editions.toml``) in an
``nbgrader_config.py`` in their home, else the roster's ``language`` column (published for them by the
hub, :mod:`classroom.student_view`), else English.
"""

import shutil
from pathlib import Path
from stat import S_ISGID, S_IWGRP

from nbgrader.exchange.default.fetch_assignment import ExchangeFetchAssignment
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from traitlets import HasTraits, Unicode

from classroom.student_view import ENGLISH, LANGUAGES, read_view
from tfcourse.registry import translated_releases

EDITIONS_FOLDER = ".editions"  # in the exchange's outbound folder: hidden from nbgrader's listing


def translated_release(outbound: str | Path, language: str, assignment: str) -> Path:
    return Path(outbound) / EDITIONS_FOLDER / language / assignment


class EditionRelease(ExchangeReleaseAssignment):
    """nbgrader's release, and each translated release of the assignment beside it."""

    def copy_files(self) -> None:
        super().copy_files()
        assignment = self.coursedir.assignment_id
        for language, folder in translated_releases().items():
            source = Path(self.coursedir.root) / folder / assignment
            if not source.is_dir():
                continue
            dest = translated_release(self.outbound_path, language, assignment)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*self.coursedir.ignore))
            shared = self.coursedir.groupshared
            self.set_perms(  # as nbgrader sets the release's own: everyone reads, the instructors' group writes
                str(Path(self.outbound_path) / EDITIONS_FOLDER),
                fileperms=0o644 | (S_IWGRP if shared else 0),
                dirperms=0o755 | ((S_ISGID | S_IWGRP) if shared else 0),
            )
            self.log.info("Released the %s edition too: %s", language, ", ".join(p.name for p in dest.iterdir()))


class EditionChoice(HasTraits):
    """A fetch's choice of edition (for a fetch class, whose ``log`` it uses): the student's own setting, else the
    roster's (the hub's student view), else English."""

    edition = Unicode(
        "", help="The edition to fetch (a code of tfcourse/editions.toml); empty: the roster's, else English"
    ).tag(config=True)

    def translated_edition(self) -> str | None:
        """The translated edition this student fetches; None for English, or for an unknown one (said in the log)."""
        view = read_view()
        language = self.edition or (view.language if view else ENGLISH)
        if language not in LANGUAGES:
            self.log.warning("Edition %r unknown (known: %s): you have the English notebooks", language, LANGUAGES)
            return None
        return None if language == ENGLISH else language

    def place_edition(self, dest: Path, had: set[str], language: str, notebooks: dict[str, bytes]) -> None:
        """The edition's ``notebooks`` (name -> content) written into ``dest``, each in place of the English one this
        fetch made; one the student ``had`` before, with their work in it, is kept."""
        if not notebooks:
            self.log.warning("No %s edition of %s was released: you have the English notebooks", language,
                             self.coursedir.assignment_id)
        for name, content in sorted(notebooks.items()):
            if name in had:
                self.log.info("Kept your own %s (a fetch never replaces your work)", name)
                continue
            (dest / name).write_bytes(content)
            self.log.info("Fetched the %s edition of %s", language, name)


class EditionFetch(EditionChoice, ExchangeFetchAssignment):
    """nbgrader's fetch; for a student of a translated edition, that edition's notebooks in place of the English."""

    def copy_files(self) -> None:
        dest = Path(self.dest_path)
        had = {notebook.name for notebook in dest.glob("*.ipynb")} if dest.is_dir() else set()
        super().copy_files()
        language = self.translated_edition()
        if language is not None:
            translated = translated_release(self.outbound_path, language, self.coursedir.assignment_id)
            notebooks = translated.glob("*.ipynb") if translated.is_dir() else []
            self.place_edition(dest, had, language, {notebook.name: notebook.read_bytes() for notebook in notebooks})
