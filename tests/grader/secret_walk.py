"""A probe that runs *inside* a graded kernel or clean re-run: which readable file holds a secret?

Its source is pasted into a submission (see ``test_kernel_reach.py``), so it uses the
standard library only, imports inside its functions and binds nothing at top level but
functions: the clean re-run keeps only an answer's definitions, and drops an import that
rebinds a name the notebook binds.

Secrets come in as hashes, so the submission plants no secret on disk itself:
``{0: hashes of hidden-test lines, n: hashes of n-line windows of solution code}``
(see :func:`_probe_digest`). A file holds a secret when one of its lines, or one of the lines of a
string literal in it (a notebook or a JSON plan quotes code), hashes to one of them.
"""


def _probe_digest(kind: int, lines: list[str]) -> str:
    """The hash the probe looks for: ``kind`` 0 for a hidden-test line, n for an n-line solution window."""
    import hashlib

    return hashlib.sha256(f"{kind}:{chr(10).join(lines)}".encode(errors="surrogatepass")).hexdigest()[:24]


def _probe_test_line(line: str) -> str:
    """A line with its whitespace collapsed."""
    return " ".join(line.split())


def _probe_code_line(line: str) -> str:
    """A line of code without its comment, whitespace collapsed (how a copied solution is recognised)."""
    return " ".join(line.split("#", 1)[0].split())


def _probe_texts(text: str) -> list[str]:
    """``text``, and the decoded string literals in it joined line by line, when it quotes any."""
    import json
    import re

    if "\\" not in text or len(text) > 2**21:
        return [text]
    literals = []
    for match in re.finditer(r'"(?:[^"\\\n]|\\.)*"', text):
        try:
            literals.append(json.loads(match.group(0)))
        except ValueError:
            continue
    return [text, "\n".join(literals)]


def _probe_holds_secret(text: str, secrets: dict[int, set[str]]) -> bool:
    for variant in _probe_texts(text):
        lines = variant.splitlines()
        tests = {_probe_test_line(line) for line in lines}
        if any(_probe_digest(0, [line]) in secrets[0] for line in tests if len(line) >= 12):
            return True
        code = [line for line in map(_probe_code_line, lines) if line]
        for size in (kind for kind in secrets if kind):
            for start in range(len(code) - size + 1):
                if _probe_digest(size, code[start : start + size]) in secrets[size]:
                    return True
    return False


def _probe_read(path: str, limit: int) -> str | None:
    """The first ``limit`` bytes of a regular file as text; None when it is no regular file or unreadable."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as handle:
            return handle.read(limit).decode(errors="replace")
    except OSError:
        return None


def _probe_process_files() -> list[str]:
    """What /proc shows of the processes in this namespace: command lines, environments, open files
    (a file deleted but still open somewhere is read through its descriptor)."""
    import os

    paths = []
    for pid in (name for name in os.listdir("/proc") if name.isdigit()):
        paths += [f"/proc/{pid}/cmdline", f"/proc/{pid}/environ"]
        try:
            paths += [f"/proc/{pid}/fd/{fd}" for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
    return paths


def _probe_read_only(path: str) -> bool:
    """Whether the mount holding ``path`` is read-only (from /proc/self/mountinfo)."""
    import os

    mounts = {}
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            fields = line.split()
            mounts[fields[4]] = "ro" in fields[5].split(",")
    path = os.path.realpath(path)
    while path not in mounts:
        path = os.path.dirname(path)
    return mounts[path]


def _probe_walk(secrets: dict[int, set[str]], budget: float = 20.0, limit: int = 4 * 2**20) -> dict:
    """Read every file this process can open, but the system's software, within ``budget`` seconds.

    Walked: everything under ``/`` (the working folder, ``/tmp``, the home folder, every folder
    bound in), ``/dev/shm``, what /proc shows of the processes in this namespace, and the
    environment. Not walked: /proc, /sys and the rest of /dev, and the system trees (``/usr``,
    ``/etc``, the Python prefixes: ``system``), of which ``writable_system`` lists those not
    mounted read-only. ``complete`` is False when the budget ran out.
    """
    import os
    import sys
    import time

    start = time.monotonic()
    trees = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", sys.prefix, sys.base_prefix)
    system = {os.path.realpath(path) for path in trees if os.path.exists(path)}
    report = {"cwd": os.getcwd(), "cwd_walked": False, "files": 0, "complete": True, "hits": [], "hit_count": 0,
              "system": sorted(system), "writable_system": sorted(p for p in system if not _probe_read_only(p)),
              "seconds": 0.0}
    hits = []

    def check(path: str) -> None:
        text = _probe_read(path, limit)
        if text is not None:
            report["files"] += 1
            if _probe_holds_secret(text, secrets):
                hits.append(path)

    for path in _probe_process_files():
        check(path)
    if _probe_holds_secret("\n".join(f"{key}={value}" for key, value in os.environ.items()), secrets):
        hits.append("os.environ")
    skip = system | {"/proc", "/sys", "/dev"}
    for root in ("/", "/dev/shm"):
        for folder, subfolders, files in os.walk(root):
            report["cwd_walked"] |= os.path.realpath(folder) == os.path.realpath(os.getcwd())
            subfolders[:] = [name for name in subfolders if os.path.join(folder, name) not in skip]
            for name in files:
                check(os.path.join(folder, name))
            if time.monotonic() > start + budget:
                report["complete"] = False
                break
    report["hits"], report["hit_count"] = sorted(set(hits))[:10], len(set(hits))  # the report must stay short
    report["seconds"] = round(time.monotonic() - start, 1)
    return report


def _probe_network(port: int) -> dict:
    """The network interfaces this process sees, and whether it reaches ``port`` on the host's loopback."""
    import socket

    report = {"interfaces": sorted(name for _, name in socket.if_nameindex()), "reached": False, "net_error": ""}
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3):
            report["reached"] = True
    except OSError as error:
        report["net_error"] = f"{type(error).__name__}: {error}"
    return report
