"""An IPython extension in every kernel on the hub: after the machine stopped one of the student's processes
for going past their memory limit, the first cell the student runs in their next kernel (the restarted one, or
a new one) says so, and why.

JupyterLab shows only "the kernel appears to have died"; the cause is in the student's cgroup
(:mod:`classroom.cgroups`), whose ``oom_kill`` count any process of theirs may read. The count
this student's kernels have already reported is kept in their home's cache, so each kill is told once.
A kernel outside a student's cgroup (an instructor's) does nothing. The notice is in the student's
edition, as the hub's student view gives it (from the hub's catalogs, ``classroom/locale``).
"""

import sys
from pathlib import Path

from classroom.cgroups import CGROUP_V1, GROUP, oom_kills, own_cgroup

NOTICE = (  # in English; a translated edition's is in the hub's catalogs (classroom/locale)
    "A kernel of yours was stopped by the machine: your notebooks together used more than the {limit} of "
    "memory each student has on this hub, so the largest of them was ended (out of memory). Its variables "
    "are gone: run the notebook's cells again from the top. To stay under the limit, close the notebooks "
    "you are not using (File > Close and Shut Down Notebook) and use smaller batches or fewer examples."
)


def notice(limit: str) -> str:
    """The notice in the student's edition as the hub published it (:mod:`classroom.student_view`), else English."""
    try:
        from classroom.student_view import ENGLISH, read_view, say  # only once a kill is to be told
        return say(getattr(read_view(), "language", ENGLISH), NOTICE, limit=limit)
    except Exception:  # the notice must be told even if the view or the catalogs cannot be read
        return NOTICE.format(limit=limit)


def student_memory_cgroup() -> Path | None:
    path = own_cgroup("memory")
    if not path or f"/{GROUP}/" not in path:
        return None
    return CGROUP_V1 / "memory" / path.lstrip("/")


def seen_file(cgroup: Path) -> Path:
    """Where the count already told is kept (the student's own cache); named after the cgroup's inode, so that the
    next server's new cgroup starts from 0."""
    return Path.home() / ".cache" / "tfcourse" / f"oom-told-{cgroup.stat().st_ino}"


def limit_text(cgroup: Path) -> str:
    limit = int((cgroup / "memory.limit_in_bytes").read_text())
    return f"{limit / 2**30:.1f} GiB"


def unreported_kills(cgroup: Path) -> int:
    """Kills in the student's cgroup that no kernel of theirs has told them about yet (and now counted as told)."""
    kills, seen = oom_kills(cgroup), seen_file(cgroup)
    try:
        told = int(seen.read_text())
    except (OSError, ValueError):
        told = 0
    if kills > told:
        seen.parent.mkdir(parents=True, exist_ok=True)
        seen.write_text(str(kills))
    return kills - told


def load_ipython_extension(ipython) -> None:
    cgroup = student_memory_cgroup()
    if cgroup is None:
        return

    def tell_once(*_) -> None:
        if unreported_kills(cgroup) > 0:
            print(notice(limit_text(cgroup)), file=sys.stderr, flush=True)  # before the cell's output
        ipython.events.unregister("pre_run_cell", tell_once)

    ipython.events.register("pre_run_cell", tell_once)
