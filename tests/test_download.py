"""The downloader against a small HTTP server on 127.0.0.1 (no other network).

The server (a thread) serves byte strings, honours ``Range: bytes=N-`` or ignores it, and can
break a transfer off halfway, which is what an unreliable network does to ``make data``.
"""

import hashlib
import os
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tfcourse import download as dl
from tfcourse.download import ChecksumMismatch, DownloadError, download, file_git_blob, file_sha256

CONTENT = bytes(range(256)) * 800 + b'"1","end","of file"\n'  # 204,820 bytes: several chunks
SHA256 = hashlib.sha256(CONTENT).hexdigest()
GIT_BLOB = hashlib.sha1(b"blob %d\0" % len(CONTENT) + CONTENT).hexdigest()


class Handler(BaseHTTPRequestHandler):
    server: "Server"

    def do_GET(self):  # http.server's name
        self.server.requests.append((self.path, self.headers.get("Range")))
        body = self.server.files.get(self.path)
        if body is None:
            self.send_error(404, "Not Found")
            return
        start, status = 0, 200
        asked = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if asked and self.server.honour_range:
            start, status = int(asked.group(1)), 206
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        payload = body[start:]
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.server.break_after is not None:  # promise everything, send part, hang up
            payload = payload[: self.server.break_after]
            self.server.break_after = None
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.files: dict[str, bytes] = {"/data/file.csv": CONTENT}
        self.requests: list[tuple[str, str | None]] = []
        self.honour_range = True
        self.break_after: int | None = None

    def url(self, path: str = "/data/file.csv") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"


@pytest.fixture
def server():
    httpd = Server()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def only(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_digests_are_what_git_and_sha256sum_print(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"hello\n")
    assert file_git_blob(path) == "ce013625030ba8dba906f756967f9e9ca394464a"  # git hash-object
    assert file_sha256(path) == "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"


def test_full_download_verified_by_sha256(server, tmp_path):
    target = tmp_path / "ag_news" / "test.csv"
    assert download(server.url(), target, sha256=SHA256, progress=False) == target
    assert target.read_bytes() == CONTENT and only(target.parent) == ["test.csv"]
    assert server.requests == [("/data/file.csv", None)]


def test_full_download_verified_by_git_blob_with_a_progress_bar(server, tmp_path, capsys):
    target = tmp_path / "train.csv"
    download(server.url(), target, git_blob=GIT_BLOB, progress=True)
    assert target.read_bytes() == CONTENT and only(tmp_path) == ["train.csv"]
    assert "train.csv" in capsys.readouterr().err  # the bar's label


def test_a_verified_file_already_in_place_is_not_downloaded_again(server, tmp_path):
    target = tmp_path / "test.csv"
    target.write_bytes(CONTENT)
    download(server.url(), target, sha256=SHA256, progress=False)
    assert server.requests == []


@pytest.mark.parametrize("kind", ["sha256", "git_blob"])
def test_mismatch_raises_with_both_digests_and_leaves_nothing(server, tmp_path, kind):
    target = tmp_path / "test.csv"
    wrong = "0" * (64 if kind == "sha256" else 40)
    with pytest.raises(ChecksumMismatch) as caught:
        download(server.url(), target, progress=False, **{kind: wrong})
    message = str(caught.value)
    assert wrong in message and (SHA256 if kind == "sha256" else GIT_BLOB) in message, message
    assert server.url() in message and str(target) in message
    assert only(tmp_path) == []  # no test.csv, no .part


def test_mismatch_keeps_an_older_file_in_place(server, tmp_path):
    target = tmp_path / "test.csv"
    target.write_bytes(b"an older file")
    with pytest.raises(ChecksumMismatch):
        download(server.url(), target, sha256="0" * 64, progress=False)
    assert target.read_bytes() == b"an older file" and only(tmp_path) == ["test.csv"]


def test_resume_from_a_part_file_with_the_first_half(server, tmp_path):
    target = tmp_path / "train.csv"
    half = len(CONTENT) // 2
    dl.part_path(target).write_bytes(CONTENT[:half])
    download(server.url(), target, git_blob=GIT_BLOB, progress=False)
    assert target.read_bytes() == CONTENT and only(tmp_path) == ["train.csv"]
    assert server.requests == [("/data/file.csv", f"bytes={half}-")]


def test_an_interrupted_transfer_keeps_the_part_and_the_next_call_resumes(server, tmp_path):
    target = tmp_path / "train.csv"
    server.break_after = 70_000
    with pytest.raises(DownloadError, match="broke off after 70,000 of 204,820 bytes") as caught:
        download(server.url(), target, sha256=SHA256, progress=False)
    assert "run again to resume" in str(caught.value)
    assert only(tmp_path) == ["train.csv.part"] and dl.part_path(target).read_bytes() == CONTENT[:70_000]
    download(server.url(), target, sha256=SHA256, progress=False)
    assert target.read_bytes() == CONTENT and only(tmp_path) == ["train.csv"]
    assert server.requests[-1] == ("/data/file.csv", "bytes=70000-")


def test_a_server_that_ignores_range_restarts_cleanly(server, tmp_path):
    server.honour_range = False
    target = tmp_path / "train.csv"
    dl.part_path(target).write_bytes(b"X" * 1000)  # not even the right bytes: all replaced
    download(server.url(), target, sha256=SHA256, progress=False)
    assert target.read_bytes() == CONTENT and only(tmp_path) == ["train.csv"]
    assert server.requests == [("/data/file.csv", "bytes=1000-")]


def test_a_damaged_part_is_retried_once_from_scratch(server, tmp_path):
    target = tmp_path / "train.csv"
    dl.part_path(target).write_bytes(b"X" * 1000)  # the server honours Range: the result is wrong at first
    download(server.url(), target, sha256=SHA256, progress=False)
    assert target.read_bytes() == CONTENT and only(tmp_path) == ["train.csv"]
    assert server.requests == [("/data/file.csv", "bytes=1000-"), ("/data/file.csv", None)]


def test_a_complete_part_gets_416_and_is_finished(server, tmp_path):
    target = tmp_path / "train.csv"
    dl.part_path(target).write_bytes(CONTENT)
    download(server.url(), target, sha256=SHA256, progress=False)
    assert target.read_bytes() == CONTENT and only(tmp_path) == ["train.csv"]


def test_http_error_names_the_url_and_what_to_do(server, tmp_path):
    target = tmp_path / "test.csv"
    with pytest.raises(DownloadError, match="HTTP 404") as caught:
        download(server.url("/missing.csv"), target, sha256=SHA256, progress=False)
    assert "/missing.csv" in str(caught.value) and str(target) in str(caught.value)
    assert only(tmp_path) == []


def test_offline_says_what_to_download_from_where_to_where_and_leaves_nothing(tmp_path, closed_port):
    url = f"http://127.0.0.1:{closed_port}/ag_news_csv/test.csv"
    target = tmp_path / "data" / "ag_news" / "test.csv"
    with pytest.raises(DownloadError) as caught:
        download(url, target, sha256=SHA256, progress=False, timeout=5)
    message = str(caught.value)
    assert "offline" in message and url in message and str(target) in message and SHA256 in message, message
    assert not (tmp_path / "data").exists()  # no file, no .part, not even the folder


# --- make data ---------------------------------------------------------------------------------------


@pytest.fixture
def mirror(server, monkeypatch):
    """The server as the mirror of two small files, with FILES' digests set to theirs."""
    train, test = CONTENT, CONTENT[::-1]
    server.files = {"/m/train.csv": train, "/m/test.csv": test}
    files = (
        dl.RemoteFile("train.csv", git_blob=hashlib.sha1(b"blob %d\0" % len(train) + train).hexdigest()),
        dl.RemoteFile("test.csv", sha256=hashlib.sha256(test).hexdigest()),
    )
    monkeypatch.setattr(dl, "FILES", files)
    return server


def test_make_data_fetches_both_files_and_says_what_it_did(mirror, tmp_path, capsys):
    assert dl.main(["--dest", str(tmp_path), "--mirror", mirror.url("/m"), "--no-progress"]) == 0
    assert only(tmp_path) == ["test.csv", "train.csv"]
    out = capsys.readouterr().out
    assert "train.csv: downloaded from" in out and "git blob id" in out and "sha256" in out
    assert dl.DATA_ENV_VAR in out  # --dest is not data/ag_news: say how the notebooks find it
    assert dl.main(["--dest", str(tmp_path), "--mirror", mirror.url("/m"), "--no-progress"]) == 0
    assert "already there" in capsys.readouterr().out and len(mirror.requests) == 2


def test_make_data_offline_explains_and_leaves_nothing(tmp_path, closed_port, capsys):
    dest = tmp_path / "ag_news"
    assert dl.main(["--dest", str(dest), "--mirror", f"http://127.0.0.1:{closed_port}/x", "--no-progress"]) == 1
    err = capsys.readouterr().err
    for remote in dl.FILES:
        assert f"http://127.0.0.1:{closed_port}/x/{remote.name}" in err and str(dest / remote.name) in err
        assert (remote.sha256 or remote.git_blob) in err
    assert "data/ag_news_sample" in err
    assert not dest.exists()


def test_the_default_mirror_is_the_original_files():
    assert dl.MIRROR.startswith("https://") and dl.MIRROR.endswith("/ag_news_csv")
    assert dl.TRAIN.git_blob == "694aa19971315410e000404523796b76349d3c1d"
    assert dl.TEST.sha256 == "521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699"


def test_the_real_test_split_downloads_and_verifies(server, tmp_path):
    folder = os.environ.get("TFCOURSE_AG_NEWS_DIR", "").strip()
    if not folder:
        if os.environ.get("CI"):
            pytest.fail("CI must set TFCOURSE_AG_NEWS_DIR to the folder holding the real test.csv (see .ci/run)")
        pytest.skip("set TFCOURSE_AG_NEWS_DIR to the folder holding the real AG News test.csv")
    real = (Path(folder) / "test.csv").read_bytes()
    server.files = {"/ag_news_csv/test.csv": real}
    target = tmp_path / "test.csv"
    download(server.url("/ag_news_csv/test.csv"), target, sha256=dl.TEST.sha256, progress=False)
    assert target.read_bytes() == real
