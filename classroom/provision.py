"""``python -m classroom.provision``: lay out the classroom hub on this machine (run as root).

Idempotent: the environment and the proxy are rebuilt only when their pins change, and the
course folder is copied only when it does not exist yet (``--refresh-course`` copies the
repository's course files over it again, keeping ``grading/``). What goes where, and who may read it:
docs/running-a-class.md.
"""

import argparse
import grp
import hashlib
import json
import logging
import os
import pwd
import re
import shutil
import subprocess
import time
from pathlib import Path

from autograder import logs
from autograder.course.settings import INSTRUCTOR_SERVER_CONFIG, CourseSettings, every_users_settings, load_config
from autograder.pipeline.exchange.handins import MAX_BYTES, MAX_FILES
from classroom.accounts import record_created, remove_accounts
from classroom.layout import COURSE_ID, DEFAULT_PREFIX, INSTRUCTORS, STUDENTS, HubLayout
from classroom.system_users import ensure_group, ensure_service_user, ensure_user

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[1]
# The interpreter the environment is made from: one every user may run (pyenv's, under /root, is not).
BASE_PYTHON = "/usr/bin/python3"
ENV_PINS = (
    "classroom/requirements-hub.txt",
    "classroom/requirements-hub-nodeps.txt",
    "classroom/constraints-hub.txt",
    "requirements.txt",
    "requirements-lock.txt",
    "requirements-removed.txt",
)
NGSHARE_PINS = ("classroom/requirements-ngshare.txt", "classroom/constraints-hub.txt", "requirements-lock.txt",
                "requirements-removed.txt")
EXCHANGES = ("filesystem", "ngshare")  # nbgrader's exchange on this machine's disk, or the ngshare service
NGSHARE_USER = "tfcourse-ngshare"  # the service's own system account: it alone reads its database and files
PROXY_PINS = ("classroom/package.json", "classroom/package-lock.json")
# What a student's server and kernels read: the helper package and its data, and the submit
# that keeps a hand-in private (the shared nbgrader settings select it for every user), with the
# measure of a hand-in that collect applies (its own module: the submit checks what collect will).
RUNTIME_PARTS = (
    "tfcourse", "data/ag_news_sample", "data/ag_news", "classroom/__init__.py", "classroom/student_submit.py",
    "autograder/__init__.py", "autograder/pipeline/__init__.py", "autograder/pipeline/exchange/__init__.py",
    "autograder/pipeline/exchange/handins.py",
    "classroom/ngshare_service.py",  # ngshare's launcher, bound to its own address (the ngshare service runs it)
    "classroom/cgroups.py", "classroom/oom_notice.py",  # a kernel stopped for memory says why on the next cell
    "classroom/locale",  # the hub's messages in each translated edition
    # The student view: DUE_DATES.md, the Chinese edition on Fetch, a late or unchanged submit asked about first.
    "classroom/student_view.py", "classroom/due_dates_view.py", "classroom/fetch_edition.py",
    "classroom/ngshare_edition.py",
    "classroom/submit_guard.py",
    # What an existing hub's configuration imports from here (python -m classroom.install, classroom/existing_hub.py).
    "classroom/existing_hub.py", "classroom/layout.py",
    # The settings layout.py reads (the course id): their declarations and the course's nbgrader_config.py.
    "autograder/course/__init__.py", "autograder/course/settings.py", "autograder/course/paths.py",
    "nbgrader_config.py",
    "classroom/kernel_ports.py",  # a kernel restarts on new ports, and one that does not answer is restarted
)
# The exchange's course folder and its parts, root:instructors so that no student can create, rename or replace
# them; what each mode lets a student do: docs/running-a-class.md (What the prefix holds).
EXCHANGE_COURSE_MODES = {".": 0o2775, "outbound": 0o2775, "inbound": 0o3773, "feedback": 0o2771}
# Which of nbgrader's parts each role gets: server extensions, and the lab plugins that use them.
STUDENT_SERVER_EXTENSIONS = {
    "nbgrader.server_extensions.formgrader": False,
    "nbgrader.server_extensions.course_list": False,
    "nbgrader.server_extensions.assignment_list": True,
    "nbgrader.server_extensions.validate_assignment": True,
    "classroom.due_dates_view": True,  # ~/DUE_DATES.md, kept up to date from the hub student-view service
}
# A student's kernel manager: a kernel restarts on new ports, and one that does not answer is restarted
# (classroom/kernel_ports.py).
STUDENT_KERNEL_MANAGER = {
    "MappingKernelManager": {"kernel_manager_class": "classroom.kernel_ports.FreshPortsKernelManager"}
}
# Nobody on the hub is asked to fetch Jupyter's news (the machine may have no way out).
EVERYONE_DISABLED_PLUGINS = {"@jupyterlab/apputils-extension:announcements": True}
STUDENT_DISABLED_PLUGINS = {
    **EVERYONE_DISABLED_PLUGINS,
    "@jupyter/nbgrader:formgrader": True,
    "@jupyter/nbgrader:course-list": True,
    "@jupyter/nbgrader:create-assignment": True,
}


def digest(paths: tuple[str, ...]) -> str:
    sha = hashlib.sha256()
    for name in paths:
        sha.update((REPO / name).read_bytes())
    return sha.hexdigest()


def stamped(stamp: Path, value: str) -> bool:
    return stamp.exists() and stamp.read_text() == value


def build_env(env: Path, pins: tuple[str, ...], requirements: str, *overrides: str, no_deps: str = "") -> None:
    """A Python environment at ``env``: ``requirements`` at the lock's versions, or those of ``overrides``
    (:func:`hub_constraints`), then ``no_deps`` without their dependencies; made again only when ``pins`` change."""
    stamp, value, python = env / ".tfcourse-pins", digest(pins), env / "bin" / "python"
    if stamped(stamp, value):
        return
    if not python.exists():
        subprocess.run([BASE_PYTHON, "-m", "venv", str(env)], check=True)
    constraints = env / "constraints.txt"
    constraints.write_text(hub_constraints(*overrides))
    install_pinned(python, REPO / requirements, constraints, no_deps)
    stamp.write_text(value)


def install_pinned(python: Path, requirements: Path, constraints: Path, no_deps: str = "") -> None:
    """``requirements`` into ``python``'s environment, each package at the version ``constraints`` pins, then
    ``no_deps`` without their dependencies; then what requirements-removed.txt lists (a package that only slows
    every start) uninstalled, as make install does."""
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--quiet", "-r", str(requirements), "-c", str(constraints)], check=True)
    if no_deps:
        subprocess.run([*pip, "install", "--quiet", "--no-deps", "-r", str(REPO / no_deps)], check=True)
    subprocess.run([*pip, "uninstall", "--quiet", "--yes", "-r", str(REPO / "requirements-removed.txt")], check=True)


def make_ngshare_state(layout: HubLayout) -> None:
    """The service's database and files: its own account's, closed to everyone else."""
    if ensure_service_user(NGSHARE_USER):
        record_created(layout.state, NGSHARE_USER)
    layout.ngshare_state.mkdir(parents=True, exist_ok=True)
    account = pwd.getpwnam(NGSHARE_USER)
    os.chown(layout.ngshare_state, account.pw_uid, account.pw_gid)
    layout.ngshare_state.chmod(0o700)


def pinned_name(line: str) -> str:
    return re.split(r"[=<>!~ ]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")


def pins_of(name: str) -> list[str]:
    """The pins of a requirements file, comments and blank lines left out."""
    stripped = (line.split("#")[0].strip() for line in (REPO / name).read_text().splitlines())
    return [line for line in stripped if line]


def hub_constraints(*more: str) -> str:
    """requirements-lock.txt, with the pins classroom/constraints-hub.txt (and ``more`` such files) replace."""
    overrides = [pin for name in ("classroom/constraints-hub.txt", *more) for pin in pins_of(name)]
    replaced = {pinned_name(line) for line in overrides}
    kept = [line for line in pins_of("requirements-lock.txt") if pinned_name(line) not in replaced]
    return "\n".join(kept + overrides) + "\n"


def install_runtime(layout: HubLayout) -> None:
    """The helper package and its data, and the translated student notebooks (with ngshare, a student copies one
    over the fetched English one), read-only; the package is found by every kernel through a ``.pth`` file."""
    from tfcourse.registry import translated_releases  # the ngshare image imports this module without tfcourse

    shutil.rmtree(layout.runtime, ignore_errors=True)
    for part in (*RUNTIME_PARTS, *translated_releases().values()):
        if (REPO / part).is_dir():
            shutil.copytree(REPO / part, layout.runtime / part, ignore=shutil.ignore_patterns("__pycache__", "*.part"))
        elif (REPO / part).is_file():
            (layout.runtime / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / part, layout.runtime / part)
    site = subprocess.run(
        [str(layout.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "tfcourse-runtime.pth").write_text(f"{layout.runtime}\n")
    readable_by_all(layout.runtime)
    kernel_config = layout.env / "etc" / "ipython" / "ipython_kernel_config.py"  # read by every kernel of the env
    kernel_config.parent.mkdir(parents=True, exist_ok=True)
    kernel_config.write_text(
        "# Written by classroom/provision.py: a student whose kernel the memory limit stopped is told why.\n"
        "c = get_config()  # noqa: F821\n"
        "c.InteractiveShellApp.extensions.append('classroom.oom_notice')\n"
    )
    readable_by_all(kernel_config.parent.parent)


def install_proxy(layout: HubLayout) -> None:
    """configurable-http-proxy from npm, exactly as the committed lock file pins it."""
    folder, value = layout.prefix / "proxy", digest(PROXY_PINS)
    if stamped(folder / ".tfcourse-pins", value) and layout.proxy.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for name in PROXY_PINS:
        shutil.copy(REPO / name, folder / Path(name).name)
    subprocess.run(["npm", "ci", "--omit=dev", "--no-audit", "--no-fund", "--loglevel=error"], cwd=folder, check=True)
    (folder / ".tfcourse-pins").write_text(value)


def write_config(layout: HubLayout, exchange: str = "filesystem") -> None:
    """Every user's nbgrader settings (course id, cell timeout, exchange: the repository's ``CourseSettings``) and
    each role's Jupyter settings."""
    common = layout.role_config("common")
    common.mkdir(parents=True, exist_ok=True)
    (common / "nbgrader_config.py").write_text(
        "# Written by classroom/provision.py: the nbgrader settings every user of the hub shares.\n"
        "c = get_config()  # noqa: F821\n"
        + every_users_settings(CourseSettings(config=load_config()))
        + EXCHANGE_SETTINGS[exchange].format(root=str(layout.exchange))
    )
    layout.exchange_choice.write_text(exchange)
    student = layout.role_config("student")
    (student / "labconfig").mkdir(parents=True, exist_ok=True)
    server = {"ServerApp": {"jpserver_extensions": STUDENT_SERVER_EXTENSIONS}, **STUDENT_KERNEL_MANAGER}
    (student / "jupyter_server_config.json").write_text(json.dumps(server, indent=1))
    (student / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": STUDENT_DISABLED_PLUGINS})
    )
    instructor = layout.role_config("instructor")  # nbgrader's defaults: every extension on, and the page policy
    (instructor / "labconfig").mkdir(parents=True, exist_ok=True)
    shutil.copy(INSTRUCTOR_SERVER_CONFIG / "jupyter_server_config.json", instructor / "jupyter_server_config.json")
    (instructor / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": EVERYONE_DISABLED_PLUGINS})
    )
    (instructor / "nbgrader_config.py").write_text(
        "# Written by classroom/provision.py: the formgrader's course is the course folder (on PYTHONPATH).\n"
        "from autograder.course.settings import REPO_ROOT, configure\n\n"
        + (INSTRUCTOR_NGSHARE_FIRST if exchange == "ngshare" else "")
        + "c = configure(get_config(), REPO_ROOT)  # noqa: F821\n"
        "# The exchange's course folder belongs to root and the instructors' group (classroom/provision.py).\n"
        "c.CourseDirectory.groupshared = True\n"
        "# Every student is a system user: a hand-in not wholly owned by the one it names is refused.\n"
        "c.SafeExchangeCollect.owner_must_match = True\n"
    )
    readable_by_all(layout.config)


HANDIN_LIMITS = (
    "# The hand-in limits: the instructors' collect refuses past them and every student's submit checks\n"
    "# them first, both from config/common/nbgrader_config.py: set them there, which every user reads:\n"
    f"# c.SafeExchangeCollect.max_bytes = {MAX_BYTES}\n"
    f"# c.SafeExchangeCollect.max_files = {MAX_FILES}\n"
)
# The exchange each user's nbgrader talks to. ngshare: the service the hub runs, at the address
# the hub gives every server (CourseSettings.ngshare_url, classroom/jupyterhub_config.py); who is who
# comes from each user's own hub token, and the server stamps each hand-in's time.
NGSHARE_SETTINGS = (
    "import os  # noqa: E402\n"
    "import ngshare_exchange  # noqa: E402\n"
    f"ngshare_exchange.configureExchange(c, os.environ[{CourseSettings.variable('ngshare_url')!r}])\n"
    "# ngshare-exchange's submit, after the check collect makes (the limits below, plain files and folders only).\n"
    "c.ExchangeFactory.submit = 'classroom.student_submit.CheckedNgshareSubmit'\n"
    "# The Chinese notebooks released inside each assignment; a student of that edition fetches them.\n"
    "c.ExchangeFactory.release_assignment = 'classroom.ngshare_edition.EditionRelease'\n"
    "c.ExchangeFactory.fetch_assignment = 'classroom.ngshare_edition.EditionFetch'\n"
    "c.ExchangeFactory.list = 'classroom.ngshare_edition.EditionList'\n"
    + HANDIN_LIMITS
)
# The instructor's: ngshare first, then the course's settings, whose collect replaces ngshare_exchange's (it
# would write a submission's files wherever their paths say) with the guarded one (autograder/course/settings.py),
# as the course folder's own settings do when read last in a terminal there.
INSTRUCTOR_NGSHARE_FIRST = "c = get_config()  # noqa: F821\n" + NGSHARE_SETTINGS
EXCHANGE_SETTINGS = {
    "filesystem": (
        "c.Exchange.root = {root!r}\n"
        "# A hand-in only its student and the instructors can read; its folder's random part never logged.\n"
        "c.ExchangeFactory.submit = 'classroom.student_submit.PrivateSubmit'\n"
        "# The Chinese notebooks released beside the English ones; a student of that edition fetches them.\n"
        "c.ExchangeFactory.release_assignment = 'classroom.fetch_edition.EditionRelease'\n"
        "c.ExchangeFactory.fetch_assignment = 'classroom.fetch_edition.EditionFetch'\n"
    ) + HANDIN_LIMITS,
    "ngshare": NGSHARE_SETTINGS,
}


def make_exchange(layout: HubLayout) -> None:
    """The exchange: a root everyone may write (nbgrader checks it), sticky, and a course folder students cannot touch.

    A course folder, or one of its parts, that is not root's (made by a student before this
    layout, or a link) is moved aside to ``<name>.untrusted-<time>``, closed to everyone, for
    the instructors to look at; a fresh one takes its place.
    """
    layout.exchange.mkdir(parents=True, exist_ok=True)
    os.chown(layout.exchange, 0, 0)
    layout.exchange.chmod(0o1777)
    instructors = grp_id(INSTRUCTORS)
    course = layout.exchange / COURSE_ID
    for part, mode in EXCHANGE_COURSE_MODES.items():
        folder = course / part
        if folder.is_symlink() or (folder.exists() and (not folder.is_dir() or folder.lstat().st_uid != 0)):
            aside = folder.with_name(f"{folder.name}.untrusted-{int(time.time())}")
            folder.rename(aside)
            os.lchown(aside, 0, 0)
            if not aside.is_symlink():
                aside.chmod(0o700)
            log.warning(f"warning: {folder} was not root's: moved to {aside} (closed); a new one replaces it")
        folder.mkdir(exist_ok=True)
        os.chown(folder, 0, instructors)
        folder.chmod(mode)


def course_files() -> list[str]:
    """The repository's course files: what git tracks or would track (no .venv, grading/, build/)."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [name for name in listed.split("\0") if name and (REPO / name).is_file()]


def make_course(layout: HubLayout, refresh: bool) -> None:
    """The instructors' course folder, which no student can enter (group ``tfcourse-instructors``, 2770)."""
    if layout.course.exists() and not refresh:
        return
    for name in course_files():
        target = layout.course / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    instructors = grp_id(INSTRUCTORS)
    for folder, _, files in os.walk(layout.course):
        os.chown(folder, 0, instructors)
        os.chmod(folder, 0o2770)
        for name in files:
            os.chown(Path(folder) / name, 0, instructors)
            os.chmod(Path(folder) / name, 0o660)


def grp_id(name: str) -> int:
    return grp.getgrnam(name).gr_gid


def readable_by_all(root: Path) -> None:
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(Path(folder) / name, 0o644)


def lay_out(layout: HubLayout, instructors: list[str]) -> None:
    """The course's two groups, the prefix (755), the hub's state (700) and the instructors' accounts (those made
    here recorded there: ``--remove-accounts`` removes them)."""
    ensure_group(INSTRUCTORS)
    ensure_group(STUDENTS)
    layout.prefix.mkdir(parents=True, exist_ok=True)
    layout.prefix.chmod(0o755)
    layout.state.mkdir(mode=0o700, exist_ok=True)
    layout.state.chmod(0o700)
    for name in instructors:
        if ensure_user(name, INSTRUCTORS):
            record_created(layout.state, name)


def provision(
    layout: HubLayout, instructors: list[str], refresh_course: bool = False, exchange: str = "filesystem"
) -> None:
    if os.geteuid() != 0:
        raise SystemExit("classroom.provision makes system users and folders other users own: run it as root")
    lay_out(layout, instructors)
    build_env(layout.env, ENV_PINS, "classroom/requirements-hub.txt", no_deps="classroom/requirements-hub-nodeps.txt")
    install_runtime(layout)
    install_proxy(layout)
    write_config(layout, exchange)
    make_exchange(layout)
    if exchange == "ngshare":
        ngshare = NGSHARE_PINS[0]  # its environment, apart from the hub's: the lock's pins with its own in their place
        build_env(layout.ngshare_env, NGSHARE_PINS, ngshare, ngshare)
        make_ngshare_state(layout)
    make_course(layout, refresh_course)


def remove_class_accounts(layout: HubLayout, homes: bool) -> None:
    """``--remove-accounts``: the accounts provision and the roster made for this class (:mod:`classroom.accounts`)."""
    removed, left = remove_accounts(layout.state, homes)
    for line in left:
        log.warning(line)
    kept = "removed with them" if homes else "kept, given to root (--remove-homes removes them)"
    log.info(f"removed {len(removed)} accounts the course made: {', '.join(removed) or 'none'}; their homes {kept}")
    if left:
        raise SystemExit(f"{len(left)} of the accounts the course made were kept: see why above")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m classroom.provision", description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", type=Path, default=DEFAULT_PREFIX, help=f"default {DEFAULT_PREFIX}")
    parser.add_argument("--instructor", action="append", default=[], help="a system user to make an instructor")
    parser.add_argument("--refresh-course", action="store_true", help="copy the course files over the course folder")
    parser.add_argument("--exchange", choices=EXCHANGES, default="filesystem",
                        help="nbgrader's exchange: this machine's disk (default) or the ngshare service")
    parser.add_argument("--remove-accounts", action="store_true",
                        help="instead: remove the system users provision and the roster made (no other)")
    parser.add_argument("--remove-homes", action="store_true", help="with --remove-accounts: their homes too")
    args = logs.parse_args(parser)
    if args.remove_accounts:
        return remove_class_accounts(HubLayout(args.prefix.resolve()), args.remove_homes)
    provision(HubLayout(args.prefix.resolve()), args.instructor, args.refresh_course, args.exchange)
    log.info(f"hub laid out under {args.prefix}; start it with: make hub HUB_PREFIX={args.prefix}")


if __name__ == "__main__":
    main()
