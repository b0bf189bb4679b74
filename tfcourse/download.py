"""Download the full AG News dataset into ``data/ag_news/``: ``make data`` (``python -m tfcourse.download``).

:func:`download` streams one file with :mod:`urllib` and a tqdm progress bar. The bytes go
to ``<name>.part`` next to the destination; an interrupted transfer keeps that ``.part`` and
the next call resumes it with an HTTP ``Range`` request (a server that ignores ``Range``
sends the whole file again, which replaces the ``.part``). The finished ``.part`` is checked
against a SHA-256 digest or a git blob id *before* it is renamed into place (an atomic
``os.replace``), so the destination is either absent, the old file, or the complete verified
file: never a truncated ``train.csv`` or ``test.csv``. A ``.part`` that fails the check is
deleted. Offline, the error says which file to fetch from where and where to put it.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from tfcourse.agnews import DATA_ENV_VAR, DEFAULT_DATA_DIR
from tfcourse.messages import tr

# The raw CSV files of the original dataset (ag_news_csv, version 3) as committed to GitHub in
# mhjabreel/CharCnn_Keras: the mirror torchtext's AG_NEWS downloads from (its MD5 for test.csv,
# d52ea96a97a2d943681189a97654912d, is that of the official test split). The checksums below decide.
MIRROR = "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv"
CHUNK_BYTES = 1 << 16
TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class RemoteFile:
    """One file of the dataset and the digest that identifies it."""

    name: str
    sha256: str | None = None
    git_blob: str | None = None  # what `git hash-object FILE` prints

    @property
    def check(self) -> str:
        return f"sha256 {self.sha256}" if self.sha256 else tr("git blob id {blob}", blob=self.git_blob)

    @property
    def command(self) -> str:
        return f"sha256sum {self.name}" if self.sha256 else f"git hash-object {self.name}"


TRAIN = RemoteFile("train.csv", git_blob="694aa19971315410e000404523796b76349d3c1d")
TEST = RemoteFile("test.csv", sha256="521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699")
FILES = (TRAIN, TEST)


class DownloadError(RuntimeError):
    """A download failed; the message says what to do (often: fetch the file by hand, and where to put it)."""


class ChecksumMismatch(DownloadError):
    """The downloaded bytes are not the expected file; the message holds both digests."""


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_git_blob(path: str | Path) -> str:
    """The git blob id of a file (SHA-1 of ``b"blob <size>\\0"`` + content), as ``git hash-object`` prints."""
    digest = hashlib.sha1(f"blob {os.path.getsize(path)}\0".encode())
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def mismatches(path: str | Path, *, sha256: str | None = None, git_blob: str | None = None) -> list[str]:
    """``[]`` when ``path`` has the expected digests, else one ``"<kind>: expected X, got Y"`` per mismatch."""
    found = []
    if sha256 and (actual := file_sha256(path)) != sha256.lower():
        found.append(f"sha256: expected {sha256.lower()}, got {actual}")
    if git_blob and (actual := file_git_blob(path)) != git_blob.lower():
        found.append(f"git blob id: expected {git_blob.lower()}, got {actual}")
    return found


def part_path(destination: Path) -> Path:
    return destination.with_name(destination.name + ".part")


def _by_hand(url: str, destination: Path, sha256: str | None, git_blob: str | None) -> str:
    check = (
        tr("`{command}` prints {value}", command="sha256sum", value=sha256)
        if sha256
        else tr("`{command}` prints {value}", command="git hash-object", value=git_blob)
        if git_blob
        else ""
    )
    return (
        tr("Download it yourself (browser or curl) from\n  {url}\nand save it as\n  {destination}\n",
           url=url, destination=destination)
        + (tr("(check: {check}), ", check=check) if check else "")
        + tr("or run this again when the network is back.")
    )


def _content_range_start(value: str | None) -> tuple[int | None, int | None]:
    """``(start, total)`` from a ``Content-Range: bytes start-end/total`` header (``None`` where unknown)."""
    match = re.fullmatch(r"\s*bytes\s+(?:(\d+)-\d+|\*)/(\d+|\*)\s*", value or "")
    if not match:
        return None, None
    start, total = match.groups()
    return (int(start) if start else None), (int(total) if total and total != "*" else None)


def _open(url: str, offset: int, timeout: float):
    headers = {"User-Agent": "tfcourse-download/1.0", "Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)


def _transfer(url: str, part: Path, destination: Path, progress: bool, timeout: float, hand: str) -> None:
    """Bring ``part`` to the complete file: resume it when it exists, else download from scratch."""
    offset = part.stat().st_size if part.is_file() else 0
    try:
        response = _open(url, offset, timeout)
    except urllib.error.HTTPError as error:
        error.close()
        if error.code == 416 and offset:  # nothing after `offset`: the .part is complete (or too long)
            _, total = _content_range_start(error.headers.get("Content-Range"))
            if total == offset:
                return
            part.unlink()
            return _transfer(url, part, destination, progress, timeout, hand)
        raise DownloadError(
            tr("could not download {url}: HTTP {code} {reason}.", url=url, code=error.code, reason=error.reason)
            + f"\n{hand}"
        ) from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
        reason = getattr(error, "reason", error)
        raise DownloadError(
            tr("could not download {url} ({reason}): offline, or the mirror is unreachable.", url=url, reason=reason)
            + f"\n{hand}"
        ) from None
    with response:
        part.parent.mkdir(parents=True, exist_ok=True)  # only now: offline leaves no empty folder behind
        length = response.headers.get("Content-Length")
        length = int(length) if length and length.isdigit() else None
        mode = "ab"
        if response.status == 206:
            start, _ = _content_range_start(response.headers.get("Content-Range"))
            if start != offset:  # not the bytes we asked for: start over
                response.close()
                part.unlink()
                return _transfer(url, part, destination, progress, timeout, hand)
        else:  # 200: the whole file (a server that ignores Range sends it again)
            offset, mode = 0, "wb"
        total = offset + length if length is not None else None
        received = offset
        bar = tqdm(
            total=total,
            initial=offset,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc=destination.name,
            disable=not progress,
            leave=True,
        )
        try:
            with bar, open(part, mode) as stream:
                while chunk := response.read(CHUNK_BYTES):
                    stream.write(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
                stream.flush()
                os.fsync(stream.fileno())
        except (OSError, http.client.HTTPException) as error:
            raise DownloadError(
                tr("the download of {url} broke off after {received:,} bytes ({error}); {part} keeps them: "
                   "run again to resume.", url=url, received=received, error=error, part=part)
                + f"\n{hand}"
            ) from None
        if total is not None and received != total:
            raise DownloadError(
                tr("the download of {url} broke off after {received:,} of {total:,} bytes; {part} keeps them: "
                   "run again to resume.", url=url, received=received, total=total, part=part)
                + f"\n{hand}"
            )


def download(
    url: str,
    destination: str | Path,
    *,
    sha256: str | None = None,
    git_blob: str | None = None,
    progress: bool = True,
    timeout: float = TIMEOUT_SECONDS,
) -> Path:
    """Download ``url`` to ``destination``, verified, and return ``destination``.

    A ``destination`` that already has the expected digest is kept as it is. Otherwise the
    bytes stream into ``<destination>.part`` (resumed with a ``Range`` request when a
    ``.part`` is already there), the ``.part`` is checked against ``sha256`` and/or
    ``git_blob`` (``git hash-object``'s id), and only then renamed onto ``destination``.
    Raises :class:`ChecksumMismatch` (after deleting the ``.part``; a resumed ``.part`` is
    first retried once from scratch) or :class:`DownloadError` (offline, HTTP error, or a
    transfer that broke off, which keeps the ``.part`` for the next call). No failure ever
    leaves a partial or unverified file at ``destination``.
    """
    destination = Path(destination)
    hand = _by_hand(url, destination, sha256, git_blob)
    if destination.is_file() and (sha256 or git_blob) and not mismatches(destination, sha256=sha256, git_blob=git_blob):
        return destination
    part = part_path(destination)
    for attempt in range(2):
        resumed = part.is_file() and part.stat().st_size > 0
        _transfer(url, part, destination, progress, timeout, hand)
        wrong = mismatches(part, sha256=sha256, git_blob=git_blob)
        if not wrong:
            os.replace(part, destination)
            return destination
        part.unlink()
        if not (resumed and attempt == 0):
            break
        # The bytes kept from an earlier transfer may be stale or damaged: one fresh try.
    raise ChecksumMismatch(
        f"{url} is not the expected file ({'; '.join(wrong)}); the download was deleted and "
        f"{destination} left as it was. The mirror may have changed: fetch the file from another copy of "
        "the original AG News dataset.\n" + hand
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``make data``: fetch train.csv and test.csv into ``data/ag_news/`` (or ``--dest``), verified."""
    parser = argparse.ArgumentParser(
        prog="python -m tfcourse.download",
        description="Download the full AG News dataset (train.csv, test.csv), resumable and checksum-verified.",
    )
    parser.add_argument(
        "--dest",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help="folder to put the files in (default: data/ag_news, where the notebooks look)",
    )
    parser.add_argument("--mirror", default=MIRROR, help=f"base URL holding the two files (default: {MIRROR})")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    dest = args.dest.expanduser().resolve()
    failed = []
    for remote in FILES:
        url = f"{args.mirror.rstrip('/')}/{remote.name}"
        target = dest / remote.name
        if target.is_file():
            if not mismatches(target, sha256=remote.sha256, git_blob=remote.git_blob):
                print(tr("{target}: already there, {check} verified", target=target, check=remote.check))
                continue
            print(tr("{target}: does not match {check}; downloading the real file to replace it", target=target,
                     check=remote.check))
        try:
            download(url, target, sha256=remote.sha256, git_blob=remote.git_blob, progress=not args.no_progress)
        except DownloadError as error:
            print(f"{target}: {str(error).splitlines()[0]}", file=sys.stderr)
            failed.append((remote, url, target))
            continue
        print(tr("{target}: downloaded from {url} ({size:,} bytes), {check} verified", target=target, url=url,
                 size=target.stat().st_size, check=remote.check))
    if failed:
        unfinished = tr("The download did not finish. Fetch by hand (browser or curl), then check each file:")
        print(unfinished, file=sys.stderr)
        for remote, url, target in failed:
            print(
                tr("  {url}\n    -> {target}   (`{command}` must print {value})", url=url, target=target,
                   command=remote.command, value=remote.sha256 or remote.git_blob),
                file=sys.stderr,
            )
        print(tr("Until then the notebooks use the committed sample in data/ag_news_sample."), file=sys.stderr)
        return 1
    if dest == DEFAULT_DATA_DIR.resolve():
        print(tr("The full AG News dataset is in {dest}: the notebooks use it from now on.", dest=dest))
    else:
        print(tr("The full AG News dataset is in {dest}: set {variable}={dest} for the notebooks to use it.", dest=dest,
                 variable=DATA_ENV_VAR))
    return 0


if __name__ == "__main__":
    sys.exit(main())
