"""A hand-in copied out of a folder its student controls, trusting nothing in it.

A student's hand-in folder (in the hub's exchange, or an LMS download) is untrusted: it may hold
links to files only the instructor can read (a solution), pipes that block the reader, devices,
files planted by another account, names that forge log lines, or more data than a class should
store (a sparse file that claims gigabytes on a few kilobytes of disk, or the reverse); and it may
change while it is read. :func:`measure_handin` walks it without reading any file (``lstat`` only)
and refuses it on the first thing that is not a plain file or folder of the right owner within the
limits, so that nothing is copied of a hand-in that breaks them; :func:`copy_handin` measures, then
copies it file by file through descriptors opened without following links (``O_NOFOLLOW``, and
``dir_fd`` for every step down), checking again each inode it holds open (its kind, its owner, its
size), and refuses the whole hand-in with a :class:`RefusedHandin`: nothing half-copied is left
behind. A file counts for the larger of its size (``st_size``) and the disk it takes
(``st_blocks`` × 512). What the student wrote about the time (``timestamp.txt``) is not read: the
hand-in's time is the latest change time (``st_ctime``) of the folder and of everything in it,
which the kernel sets and no user can move back.

The student's own submit on the hub (``classroom/student_submit.py``) runs the same measure, with
the same limits, before handing in: so this module imports nothing but the standard library (the
hub's runtime ships it to every student's server).
"""

import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

# Limits an instructor may change (nbgrader config on the hub, options of `python -m autograder collect`).
MAX_BYTES = 64 * 1024 * 1024  # the course's largest notebook with outputs is a few MB
MAX_FILES = 100  # files and folders
MAX_DEPTH = 16  # folders within folders: deeper is refused, never walked (the walk recurses)
CHUNK = 1 << 20
KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a named pipe", stat.S_IFSOCK: "a socket",
         stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}
# What a caller may leave out of a hand-in, as shutil.copytree's ``ignore``: (folder's path, names) -> names left out.
Ignore = Callable[[str, list[str]], set[str]]


class RefusedHandin(ValueError):
    """The hand-in breaks a rule: the message says which entry and why (it names no folder's random part).

    ``rule`` names the rule (``kind``, ``owner``, ``files``, ``bytes``, ``depth``, ``name``, ``changed``,
    ``folder``, or ``other``) and ``facts`` what the message was made of, for a caller that says it in
    another language (the student's submit).
    """

    def __init__(self, message: str, rule: str = "other", **facts: object) -> None:
        super().__init__(message)
        self.rule, self.facts = rule, facts


@dataclass(frozen=True)
class HandinLimits:
    max_bytes: int = MAX_BYTES
    max_files: int = MAX_FILES


DEFAULT_LIMITS = HandinLimits()


@dataclass
class HandinCopy:
    """What was measured or copied: its files and folders, their bytes, and the hand-in's time as the server saw it."""

    files: int = 0  # files and folders
    bytes: int = 0  # measured: each file's footprint; copied: the bytes read
    changed: float = 0.0  # the latest st_ctime of the folder and its entries (seconds since the epoch)

    @property
    def changed_at(self) -> datetime:
        return datetime.fromtimestamp(self.changed, UTC)


def kind_of(mode: int) -> str:
    return KINDS.get(stat.S_IFMT(mode), "not a plain file or folder")


def footprint(info: os.stat_result) -> int:
    """What a file counts for: the larger of its size and the disk it takes (a sparse file, or a tiny one)."""
    return max(info.st_size, info.st_blocks * 512)


def safe_name(name: str) -> str:
    """A name as it may appear in a message: control characters (a forged log line) shown escaped."""
    return name.encode("unicode_escape", errors="backslashreplace").decode("ascii")


def not_plain(where: str, mode: int) -> RefusedHandin:
    return RefusedHandin(f"{where} is {kind_of(mode)}: a hand-in holds plain files and folders only",
                         "kind", where=where, kind=stat.S_IFMT(mode))


class _Walk:
    """One walk in progress (a measure, or a copy when ``target`` is given): the limits, the owner every
    inode must have, the files left out, the running totals."""

    def __init__(self, owner: int | None, limits: HandinLimits, ignore: Ignore | None = None) -> None:
        self.owner, self.limits, self.ignore, self.copy = owner, limits, ignore, HandinCopy()

    def check(self, info: os.stat_result, where: str, want: int) -> None:
        if stat.S_IFMT(info.st_mode) != want:
            raise not_plain(where, info.st_mode)
        if self.owner is not None and info.st_uid != self.owner:
            raise RefusedHandin(f"{where} belongs to another account (uid {info.st_uid}), not the student it names",
                                "owner", where=where, uid=info.st_uid)
        self.copy.changed = max(self.copy.changed, info.st_ctime)

    def count(self) -> None:
        self.copy.files += 1
        if self.copy.files > self.limits.max_files:
            raise RefusedHandin(f"more than {self.limits.max_files} files and folders (the limit the instructor set)",
                                "files", limit=self.limits.max_files)

    def add_bytes(self, amount: int, where: str, size: int) -> None:
        """Count ``amount`` more bytes of the file ``where`` (``size``: what that file counts for)."""
        self.copy.bytes += amount
        if self.copy.bytes > self.limits.max_bytes:
            raise RefusedHandin(
                f"more than {self.limits.max_bytes:,} bytes (the limit the instructor set; each file counts for "
                f"the larger of its size and the disk it takes), reached at {where} ({size:,} bytes)",
                "bytes", limit=self.limits.max_bytes, where=where, size=size,
            )

    def folder(self, handle: int, source: Path, target: Path | None, where: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise RefusedHandin(f"{where}: folders nested more than {MAX_DEPTH} deep", "depth",
                                where=where, limit=MAX_DEPTH)
        if target is not None:
            target.mkdir()
        with os.scandir(handle) as entries:
            names = sorted(entry.name for entry in entries)
        left_out = self.ignore(str(source), names) if self.ignore else set()
        for name in names:
            if name in left_out:
                continue
            shown = f"{where}/{safe_name(name)}"
            if not name.isprintable():
                raise RefusedHandin(f"{shown}: a name with control characters", "name", where=shown)
            info = os.stat(name, dir_fd=handle, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=handle)
                try:
                    self.check(os.fstat(child), shown, stat.S_IFDIR)
                    self.count()
                    self.folder(child, source / name, None if target is None else target / name, shown, depth + 1)
                finally:
                    os.close(child)
            elif not stat.S_ISREG(info.st_mode):
                raise not_plain(shown, info.st_mode)
            elif target is None:
                self.check(info, shown, stat.S_IFREG)
                self.count()
                self.add_bytes(footprint(info), shown, footprint(info))
            else:
                self.file(handle, name, target / name, shown)

    def file(self, folder: int, name: str, target: Path, where: str) -> None:
        try:  # O_NONBLOCK: a pipe swapped in after the check above must not hang the instructor's collect
            handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        except OSError as error:  # ELOOP: it became a link since it was listed
            raise RefusedHandin(f"{where} changed while it was read ({error.strerror})", "changed",
                                where=where) from None
        try:
            info = os.fstat(handle)
            self.check(info, where, stat.S_IFREG)
            self.count()
            if self.copy.bytes + footprint(info) > self.limits.max_bytes:  # grown since it was measured
                self.add_bytes(footprint(info), where, footprint(info))
            with open(handle, "rb", closefd=False) as source, target.open("wb") as sink:
                while chunk := source.read(CHUNK):
                    self.add_bytes(len(chunk), where, footprint(info))
                    sink.write(chunk)
            self.check(os.fstat(handle), where, stat.S_IFREG)  # its change time after the read
        finally:
            os.close(handle)


def _open_folder(source: Path) -> int:
    try:
        return os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        raise RefusedHandin(f"the hand-in is not a folder that can be opened ({error.strerror})", "folder",
                            error=error.strerror) from None


def measure_handin(
    source: Path, owner: int | None = None, limits: HandinLimits = DEFAULT_LIMITS, ignore: Ignore | None = None
) -> HandinCopy:
    """Measure the hand-in folder ``source`` without reading a file, or refuse it: what collect will refuse.

    ``owner``: the uid that the folder and every entry in it must belong to (the student's account
    on the hub); None where ownership says nothing (an LMS download, one user's laptop).
    ``ignore``: what the caller leaves out (nbgrader's submit leaves out checkpoints and caches).
    """
    handle = _open_folder(source)
    walk = _Walk(owner, limits, ignore)
    try:
        walk.check(os.fstat(handle), "the hand-in folder", stat.S_IFDIR)
        walk.folder(handle, Path(source), None, ".")
    finally:
        os.close(handle)
    return walk.copy


def copy_handin(
    source: Path, target: Path, owner: int | None = None, limits: HandinLimits = DEFAULT_LIMITS
) -> HandinCopy:
    """Copy the hand-in folder ``source`` to ``target`` (which must not exist), or refuse it whole.

    Measured first (:func:`measure_handin`): a hand-in over the limits is refused before a byte of
    it is written. ``owner`` as for :func:`measure_handin`.
    """
    measure_handin(source, owner, limits)
    handle = _open_folder(source)
    walk = _Walk(owner, limits)
    try:
        walk.check(os.fstat(handle), "the hand-in folder", stat.S_IFDIR)
        walk.folder(handle, Path(source), Path(target), ".")
        walk.check(os.fstat(handle), "the hand-in folder", stat.S_IFDIR)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    finally:
        os.close(handle)
    return walk.copy


def check_file(path: Path, limits: HandinLimits = DEFAULT_LIMITS) -> None:
    """One file of an LMS download: a plain file (not a link, pipe or device) within the size limit."""
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise RefusedHandin(f"{safe_name(path.name)} is {kind_of(info.st_mode)}: only plain files are collected",
                            "kind", where=safe_name(path.name), kind=stat.S_IFMT(info.st_mode))
    if footprint(info) > limits.max_bytes:
        raise RefusedHandin(f"{safe_name(path.name)} has more than {limits.max_bytes:,} bytes (the limit)",
                            "bytes", limit=limits.max_bytes)
