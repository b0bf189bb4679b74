"""Measure each notebook's full-mode peak memory, for sizing the single-user pods (classroom/k8s/README.md).

Each solution notebook (``solutions/NN/NN.ipynb``, i.e. a notebook a student has completed) runs top
to bottom in a fresh kernel, as a student runs it: full mode (``TFCOURSE_FAST`` and
``NBGRADER_EXECUTION`` removed from the environment), one thread (``OMP_NUM_THREADS=1``, what a
pod with a one-core limit gives torch), its folder as working directory. An extra last cell reads
the kernel's own peak resident set (``VmHWM`` in ``/proc/self/status``) and that of any process it
waited for (``RUSAGE_CHILDREN``); the runner, a subprocess per notebook, also reads
``RUSAGE_CHILDREN`` once the kernel has exited. The largest is recorded, with wall time and the
load average before and after::

    nice -n 10 .venv/bin/python classroom/k8s/measure_peak_memory.py            # all, one at a time
    nice -n 10 .venv/bin/python classroom/k8s/measure_peak_memory.py 07_language_model
    nice -n 10 .venv/bin/python classroom/k8s/measure_peak_memory.py --server   # an idle Jupyter server

Results are merged into ``classroom/k8s/peak_memory.json`` (one entry per notebook, kept until
measured again), which tests/classroom/test_k8s.py compares with the limits in values.yaml.
"""

import argparse
import datetime
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUTPUT = HERE / "peak_memory.json"
FULL_MODE_REMOVED = ("TFCOURSE_FAST", "NBGRADER_EXECUTION")

PROBE = """\
import json as _json, resource as _resource
_status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
print("PEAK-MEMORY " + _json.dumps({
    "vmhwm_kib": int(_status["VmHWM"].split()[0]),
    "self_maxrss_kib": _resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss,
    "children_maxrss_kib": _resource.getrusage(_resource.RUSAGE_CHILDREN).ru_maxrss,
}))
"""


def full_mode_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FULL_MODE_REMOVED}
    env["OMP_NUM_THREADS"] = "1"
    env["MKL_NUM_THREADS"] = "1"
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_one(notebook: Path) -> None:
    """In the subprocess: execute ``notebook`` plus the probe cell, print the probe's numbers."""
    import nbclient  # only in the subprocess
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    client = nbclient.NotebookClient(
        nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(notebook.parent)}}
    )
    client.execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    probe = json.loads(text.split("PEAK-MEMORY ", 1)[1].splitlines()[0])
    probe["runner_children_maxrss_kib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print("RESULT " + json.dumps(probe), flush=True)


def measure(assignment: str) -> dict:
    notebook = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    load_before = os.getloadavg()
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, __file__, "--run-one", str(notebook)],
        env=full_mode_env(), capture_output=True, text=True, check=False,
    )
    wall = time.monotonic() - start
    load_after = os.getloadavg()
    if done.returncode != 0 or "RESULT " not in done.stdout:
        raise SystemExit(f"{assignment} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    probe = json.loads(done.stdout.split("RESULT ", 1)[1].splitlines()[0])
    peak_kib = max(probe["vmhwm_kib"], probe["children_maxrss_kib"], probe["runner_children_maxrss_kib"])
    return {
        "peak_rss_mib": round(peak_kib / 1024, 1),
        "wall_s": round(wall, 1),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "probe_kib": probe,
    }


def measure_server(settle_s: float = 20.0) -> dict:
    """Peak resident set of an idle JupyterLab server (the pod's other process), with its extensions."""
    import psutil

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ServerApp.token=probe",
           f"--ServerApp.root_dir={ROOT / 'notebooks'}", "--ServerApp.open_browser=False"]
    if os.getuid() == 0:
        cmd.append("--allow-root")
    server = subprocess.Popen(cmd, env=full_mode_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(settle_s)
        status = Path(f"/proc/{server.pid}/status").read_text()
        vmhwm = int(next(line for line in status.splitlines() if line.startswith("VmHWM")).split()[1])
        rss = psutil.Process(server.pid).memory_info().rss // 1024
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {"peak_rss_mib": round(vmhwm / 1024, 1), "rss_after_settle_mib": round(rss / 1024, 1), "settle_s": settle_s}


def machine() -> dict:
    mem_kib = int(next(line for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal")).split()[1])
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpus": os.cpu_count(), "cpu_model": model, "memory_gib": round(mem_kib / 2**20, 1),
            "python": platform.python_version()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="e.g. 06_ag_news_classifier (default: all)")
    parser.add_argument("--server", action="store_true", help="measure an idle JupyterLab server instead")
    parser.add_argument("--run-one", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    if args.run_one:
        run_one(args.run_one)
        return 0
    data = json.loads(args.output.read_text()) if args.output.exists() else {"notebooks": {}}
    data["mode"] = "full (TFCOURSE_FAST and NBGRADER_EXECUTION unset), OMP_NUM_THREADS=1, solutions/ notebooks"
    data["machine"] = machine()
    today = datetime.date.today().isoformat()
    if args.server:
        data["jupyter_server"] = {**measure_server(), "date": today}
        print(f"jupyter server: {data['jupyter_server']}")
    else:
        names = args.assignments or sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
        for name in names:
            entry = {**measure(name), "date": today}
            data["notebooks"][name] = entry
            print(f"{name:26s} {entry['peak_rss_mib']:8.1f} MiB {entry['wall_s']:7.1f} s  "
                  f"load {entry['load_before'][0]:.2f} -> {entry['load_after'][0]:.2f}", flush=True)
            args.output.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    args.output.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
