"""A hand-in copied out of a folder its student controls, trusting nothing in it.

A student's hand-in folder (in the hub's exchange, or an LMS download) is untrusted: it may hold
links to files only the instructor can read (a solution), pipes that block the reader, devices,
files planted by another account, names that forge log lines, or more data than a class should
store; and it may change while it is read. :func:`copy_handin` copies it file by file through
descriptors opened without following links (``O_NOFOLLOW``, and ``dir_fd`` for every step down),
checks each inode it holds open (its kind, its owner, its size), and refuses the whole hand-in
with a :class:`RefusedHandin` on the first thing that is not a plain file or folder of the right
owner within the limits: nothing half-copied is left behind. What the student wrote about the
time (``timestamp.txt``) is not read: the hand-in's time is the latest change time (``st_ctime``)
of the folder and of everything in it, which the kernel sets and no user can move back.
"""

import os
import shutil
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

# Limits an instructor may change (nbgrader config on the hub, options of `python -m autograder collect`).
MAX_BYTES = 64 * 1024 * 1024  # the course's largest notebook with outputs is a few MB
MAX_FILES = 100  # files and folders
MAX_DEPTH = 16  # folders within folders: deeper is refused, never walked (the walk recurses)
CHUNK = 1 << 20
KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a named pipe", stat.S_IFSOCK: "a socket",
         stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}  # fmt: skip


class RefusedHandin(ValueError):
    """The hand-in breaks a rule: the message says which entry and why (it names no folder's random part)."""


@dataclass(frozen=True)
class HandinLimits:
    max_bytes: int = MAX_BYTES
    max_files: int = MAX_FILES


DEFAULT_LIMITS = HandinLimits()


@dataclass
class HandinCopy:
    """What was copied: its files and folders, their bytes, and the hand-in's time as the server saw it."""

    files: int = 0  # files and folders
    bytes: int = 0
    changed: float = 0.0  # the latest st_ctime of the folder and its entries (seconds since the epoch)

    @property
    def changed_at(self) -> datetime:
        return datetime.fromtimestamp(self.changed, UTC)


def kind_of(mode: int) -> str:
    return KINDS.get(stat.S_IFMT(mode), "not a plain file or folder")


def safe_name(name: str) -> str:
    """A name as it may appear in a message: control characters (a forged log line) shown escaped."""
    return name.encode("unicode_escape", errors="backslashreplace").decode("ascii")


class _Walk:
    """One copy in progress: the limits, the owner every inode must have, the running totals."""

    def __init__(self, owner: int | None, limits: HandinLimits) -> None:
        self.owner, self.limits, self.copy = owner, limits, HandinCopy()

    def check(self, info: os.stat_result, where: str, want: int) -> None:
        if stat.S_IFMT(info.st_mode) != want:
            raise RefusedHandin(f"{where} is {kind_of(info.st_mode)}: a hand-in holds plain files and folders only")
        if self.owner is not None and info.st_uid != self.owner:
            raise RefusedHandin(f"{where} belongs to another account (uid {info.st_uid}), not the student it names")
        self.copy.changed = max(self.copy.changed, info.st_ctime)

    def count(self) -> None:
        self.copy.files += 1
        if self.copy.files > self.limits.max_files:
            raise RefusedHandin(f"more than {self.limits.max_files} files and folders (the limit the instructor set)")

    def folder(self, handle: int, target: Path, where: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise RefusedHandin(f"{where}: folders nested more than {MAX_DEPTH} deep")
        target.mkdir()
        with os.scandir(handle) as entries:
            names = sorted(entry.name for entry in entries)
        for name in names:
            shown = f"{where}/{safe_name(name)}"
            if not name.isprintable():
                raise RefusedHandin(f"{shown}: a name with control characters")
            info = os.stat(name, dir_fd=handle, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=handle)
                try:
                    self.check(os.fstat(child), shown, stat.S_IFDIR)
                    self.count()
                    self.folder(child, target / name, shown, depth + 1)
                finally:
                    os.close(child)
            elif stat.S_ISREG(info.st_mode):
                self.file(handle, name, target / name, shown)
            else:
                raise RefusedHandin(f"{shown} is {kind_of(info.st_mode)}: a hand-in holds plain files and folders only")

    def file(self, folder: int, name: str, target: Path, where: str) -> None:
        try:  # O_NONBLOCK: a pipe swapped in after the check above must not hang the instructor's collect
            handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
        except OSError as error:  # ELOOP: it became a link since it was listed
            raise RefusedHandin(f"{where} changed while it was read ({error.strerror})") from None
        try:
            self.check(os.fstat(handle), where, stat.S_IFREG)
            self.count()
            with open(handle, "rb", closefd=False) as source, target.open("wb") as sink:
                while chunk := source.read(CHUNK):
                    self.copy.bytes += len(chunk)
                    if self.copy.bytes > self.limits.max_bytes:
                        raise RefusedHandin(f"more than {self.limits.max_bytes:,} bytes (the limit the instructor set)")
                    sink.write(chunk)
            self.check(os.fstat(handle), where, stat.S_IFREG)  # its change time after the read
        finally:
            os.close(handle)


def copy_handin(
    source: Path, target: Path, owner: int | None = None, limits: HandinLimits = DEFAULT_LIMITS
) -> HandinCopy:
    """Copy the hand-in folder ``source`` to ``target`` (which must not exist), or refuse it whole.

    ``owner``: the uid that the folder and every entry in it must belong to (the student's account
    on the hub); None where ownership says nothing (an LMS download, one user's laptop).
    """
    try:
        handle = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        raise RefusedHandin(f"the hand-in is not a folder that can be opened ({error.strerror})") from None
    walk = _Walk(owner, limits)
    try:
        walk.check(os.fstat(handle), "the hand-in folder", stat.S_IFDIR)
        walk.folder(handle, Path(target), ".")
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
        raise RefusedHandin(f"{safe_name(path.name)} is {kind_of(info.st_mode)}: only plain files are collected")
    if info.st_size > limits.max_bytes:
        raise RefusedHandin(f"{safe_name(path.name)} has more than {limits.max_bytes:,} bytes (the limit)")
