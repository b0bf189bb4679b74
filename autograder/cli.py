"""The instructor's command line: ``python -m autograder <command>``, one command per step.

collect DOWNLOAD     LMS zip or folder -> grading/submitted/<student>/<assignment>/
sanitize             list (or --write) the repairs each submission needs
grade                autograde in isolation, in parallel, resumably
feedback             HTML per student without hidden tests, maths offline; flagged ones held
export               grading/grades.csv with status, reason and per-test columns (--format LMS: its import, --feedback)
report               class report (HTML with figures)
similarity           pairs of answers closer than independent work explains (HTML page, similarity.json)
gradescope NOTEBOOK  Gradescope's autograder zip for one notebook (instructors only: it holds the hidden tests)

Settings: the course's nbgrader_config.py, then --Class.trait=value anywhere on the line (--GradeSettings.jobs=4),
then a command's own flags (docs/instructors.md, Settings). --log-level, --quiet, --verbose: how much it says.

Each command imports its own modules when it runs (pandas, seaborn, copydetect, the grader): none
waits for what only another needs (the start-up each saves: docs/measurements.md).
"""

import argparse
import copy
import logging
import os
import sys
from concurrent.futures import Executor
from pathlib import Path

from traitlets.config import Config, Configurable

from autograder import logs
from autograder.course.course import Course
from autograder.course.paths import EXPORT_FILE, GRADING_DIRECTORY
from autograder.course.settings import CONFIG_FILE, REPO_ROOT, CourseSettings, GradeSettings, load_config
from autograder.launch.limits import Limits
from autograder.launch.sandbox import bwrap_available
from autograder.lms.base import formats
from autograder.pipeline.commands import collect
from autograder.pipeline.exchange.handin_names import shown
from autograder.pipeline.exchange.handins import MAX_BYTES, HandinLimits, safe_name
from autograder.pipeline.storage.results import Status, SubmissionResult

log = logging.getLogger(__name__)
# grade's flags for settings (--jobs 4 is --GradeSettings.jobs=4): their help and type are the settings'.
GRADE_FLAGS = {"jobs": (GradeSettings, "jobs"), "timeout": (GradeSettings, "wall_seconds"),
               "cell_timeout": (CourseSettings, "cell_timeout"), "memory": (GradeSettings, "memory_gib")}


def dask_executor(address: str) -> Executor:
    """A concurrent.futures executor on a dask.distributed cluster (``pip install distributed``)."""
    try:
        from dask.distributed import Client  # optional dependency
    except ImportError as error:
        raise SystemExit("--scheduler needs dask.distributed: pip install distributed") from error
    return Client(address).get_executor()


def run_collect(args: argparse.Namespace) -> int:
    found = collect.collect(args.download, args.course, args.pattern, HandinLimits(max_bytes=args.max_bytes))
    for student, assignment, name in found.collected:
        lms_id = found.lms_ids.get((student, assignment))
        log.info(f"collected  {student:20s} {assignment:24s} <- {safe_name(name)}" + (f" ({lms_id})" if lms_id else ""))
    for student, assignment, name in found.copies_taken():
        log.info(f"{student}: took {shown(name)} as {assignment}.ipynb")
    taken = {(student, assignment): name for student, assignment, name in found.collected}
    for student, assignment, name in found.replaced:
        kept = shown(taken[student, assignment])
        log.info(f"{student}: ignored {shown(name)} ({kept} was taken as {assignment}.ipynb)")
    for name in found.unreadable:
        log.info(f"unreadable {safe_name(name)} (collected; grade will report it)")
    for name in found.unmatched:
        log.info(f"unmatched  {safe_name(name)}")
    for refusal in found.refused:
        log.info(f"refused    {refusal.found} ({refusal.student}, {refusal.assignment}): {refusal.reason}")
    log.info(f"{len(found.collected)} collected, {len(found.unmatched)} unmatched, {len(found.unreadable)} unreadable, "
          f"{len(found.refused)} refused, {len(found.replaced)} not taken")
    return 0


def run_sanitize(args: argparse.Namespace) -> int:
    from autograder.pipeline.commands import sanitize  # each command imports its own modules, see the module

    course: Course = args.course
    run = sanitize.sanitize_submissions(course, args.assignment or course.assignments(), args.student, args.write)
    for line in run.lines:
        log.info(line)
    log.info(run.summary(args.write))
    return 0


def run_grade(args: argparse.Namespace) -> int:
    from autograder.pipeline.commands import grade, profile

    given = copy.deepcopy(args.config)
    for flag, (group, name) in GRADE_FLAGS.items():
        given[group.__name__][name] = getattr(args, flag)
    limits = Limits.configured(given)
    sandbox = None if args.sandbox == "auto" else args.sandbox == "on"
    if sandbox is None and not bwrap_available():
        log.warning("note: bubblewrap (bwrap) is not installed; student code runs without a filesystem sandbox")
    executor = dask_executor(args.scheduler) if args.scheduler else None
    options = grade.GradeOptions(assignments=args.assignment, students=args.student, jobs=args.jobs, force=args.force,
                                 limits=limits, clean_rerun=not args.no_clean_rerun, sandbox=sandbox)
    results = grade.grade(args.course, options, executor)
    handed_in = {path.name for path in args.course.grading.submitted().glob("*/*") if path.is_dir()}
    for line in grade_summary(results, handed_in):
        log.info(line)
    if args.profile:
        reference = profile.reference_cell_seconds(args.course, {r.assignment for r in results})
        log.info("\nmean seconds per job and phase (reference: the reference answers' own cell time):")
        for line in profile.phase_table(results, reference):
            log.info(line)
    return 0


def grade_summary(results: list[SubmissionResult], handed_in: set[str]) -> list[str]:
    """``grade``'s report: a row per submission (and under it, which file it took under a copy's name and which
    notebook files it ignored), ``missing`` rows only for assignments someone handed in.

    ``handed_in`` holds the assignments with at least one submission; the missing submissions of
    the others (notebooks nobody has handed in yet) are counted in one line instead of listed.
    """

    def unopened(result: SubmissionResult) -> bool:
        return result.status == Status.MISSING and result.assignment not in handed_in

    listed = sorted((r for r in results if not unopened(r)), key=lambda r: (r.assignment, r.student))
    lines = []
    for result in listed:
        most = sum(t.max_score for t in result.tests)
        lines.append(f"{result.assignment:16s} {result.student:20s} {result.status!s:11s} {result.score:5g}/{most:<4g} "
                     f"{result.seconds:6.1f}s {result.reason[:100]}")
        lines += [f"  {result.student}: {note}" for note in result.files]  # a copy's name taken, files ignored
    counted = [r for r in results if unopened(r)]
    if counted:
        assignments = len({r.assignment for r in counted})
        lines.append(f"{len(counted)} missing submissions not listed, of {assignments} assignments nobody handed in")
    graded = sum(r.status != Status.MISSING for r in results)
    to_look_at = sum(r.status != Status.GRADED for r in listed)
    lines.append(f"{graded} graded in this run; {to_look_at} need a look (see export / report)")
    return lines


def run_feedback(args: argparse.Namespace) -> int:
    from autograder.pipeline.commands import feedback

    release, everything = args.release_flagged or [], args.release_all_flagged
    unmatched = []
    if release or everything:
        unmatched = feedback.release_flagged(args.course, release, everything)
    for selector in unmatched:
        log.warning(f"--release-flagged {selector}: no flagged submission of that name")
    run = feedback.write_feedback(args.course, args.student)
    for path in run.written:
        log.info(path)
    for result in run.held:
        key = feedback.submission_key(result)
        log.info(f"held {key}: flagged ({result.reason}); after a look, release it with --release-flagged {key}")
        for flag in result.flags:
            log.info(f"    {flag}")
    log.info(f"{len(run.written)} feedback files written, {len(run.held)} submissions held")
    return 1 if unmatched else 0


def run_export(args: argparse.Namespace) -> int:
    from autograder.pipeline.commands import export

    output = args.output or args.course.grading.file(EXPORT_FILE)
    output.parent.mkdir(parents=True, exist_ok=True)
    if args.format == "csv" and args.feedback:
        raise SystemExit("export --feedback: name the LMS with --format")
    if args.format == "csv":
        frame = export.export_csv(args.course, output)
        log.info(f"{len(frame)} rows -> {output}")
        return 0
    lms = formats()[args.format](args.course)
    args.output = output
    written = lms.send_feedback(args) if args.feedback else lms.write_grades(export.export_frame(args.course), output)
    for path in written.files:
        log.info(f"{args.format} {'feedback' if args.feedback else 'import file'} -> {path}")
    for line in written.planned:
        log.info(f"dry run, not sent: {line}")
    log.info(f"{written.students} {'submissions with feedback' if args.feedback else 'student rows'}")
    if written.left_out:
        log.info(f"left out, no {args.format} identifier from collect: {', '.join(written.left_out)}")
    for submission in written.to_check:
        log.info(f"look before importing: {submission} (see the plain export)")
    return 0


def run_report(args: argparse.Namespace) -> int:
    from autograder.pipeline.commands import report

    log.info(report.write_report(args.course, args.output))
    return 0


def run_similarity(args: argparse.Namespace) -> int:
    from autograder.similarity import command

    return command.run(args.course, args.assignment, args.jobs, args.output)


def run_gradescope(args: argparse.Namespace) -> int:
    from autograder.gradescope.build import autograded_points, build

    limits = Limits(args.timeout, cell_timeout=args.cell_timeout)
    output = args.output or args.course.root / "build" / "gradescope"
    path = build(args.course, args.assignment, output, limits)
    points = autograded_points(args.course, args.assignment)
    logging.getLogger(__name__).info("%s (for instructors only; its autograder points: %g)", path, points)
    return 0


def parser(config: Config | None = None) -> argparse.ArgumentParser:
    """The command line, its defaults those ``config`` sets (:func:`load_config`; None: this repository's)."""
    config = load_config() if config is None else config
    main = argparse.ArgumentParser(prog="python -m autograder", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_course_options(main, REPO_ROOT, GRADING_DIRECTORY)
    logs.add_options(main)
    # The same options after the command (`grade --root X`); given there, they replace those given before it.
    course = argparse.ArgumentParser(add_help=False)
    add_course_options(course, argparse.SUPPRESS, argparse.SUPPRESS)
    logs.add_options(course, argparse.SUPPRESS)
    commands = main.add_subparsers(dest="command", required=True)

    step = commands.add_parser("collect", help="LMS download -> submitted/", parents=[course])
    step.add_argument("download", type=Path, help="zip file or folder")
    step.add_argument("--pattern", help="regular expression with a (?P<student>...) group, matched on the path")
    step.add_argument("--max-bytes", type=int, default=MAX_BYTES,
                      help=f"refuse a file larger than this (default: {MAX_BYTES:,})")
    step.set_defaults(run=run_collect)

    step = commands.add_parser("sanitize", help="list the repairs submissions need", parents=[course])
    step.add_argument("--assignment", nargs="+", action="extend", help="repeat or list several")
    step.add_argument("--student", nargs="+", action="extend", help="repeat or list several")
    step.add_argument("--write", action="store_true", help="repair the files in place (grade repairs a copy anyway)")
    step.set_defaults(run=run_sanitize)

    step = commands.add_parser("grade", help="autograde all (or some) submissions", parents=[course])
    step.add_argument("--assignment", nargs="+", action="extend", help="repeat or list several")
    step.add_argument("--student", nargs="+", action="extend", help="repeat or list several")
    step.add_argument("--jobs", **setting_option(config, *GRADE_FLAGS["jobs"]))  # the course's settings, for this run
    step.add_argument("--timeout", **setting_option(config, *GRADE_FLAGS["timeout"]))
    step.add_argument("--cell-timeout", **setting_option(config, *GRADE_FLAGS["cell_timeout"]))
    step.add_argument("--memory", **setting_option(config, *GRADE_FLAGS["memory"]))
    step.add_argument("--force", action="store_true", help="re-grade submissions already graded")
    step.add_argument("--sandbox", choices=["auto", "on", "off"], default="auto",
                      help="bubblewrap (auto: if present; default: %(default)s)")
    step.add_argument(
        "--no-clean-rerun",
        action="store_true",
        help="no tamper re-run of tests the kernel passed (faster, less safe); a dead kernel is still rescued",
    )
    step.add_argument("--scheduler", help="dask.distributed scheduler address, instead of local processes")
    step.add_argument("--profile", action="store_true", help="print the mean seconds of each phase of a job")
    step.set_defaults(run=run_grade)

    step = commands.add_parser(
        "feedback", help="HTML feedback per student (flagged submissions held)", parents=[course]
    )
    step.add_argument("--student", nargs="+", action="extend", help="repeat or list several")
    step.add_argument("--release-flagged", nargs="+", action="extend", metavar="STUDENT[/ASSIGNMENT]",
                      help="write the feedback of these flagged submissions, now and in later runs")
    step.add_argument("--release-all-flagged", action="store_true", help="release every flagged submission")
    step.set_defaults(run=run_feedback)

    step = commands.add_parser("export", help="grades CSV, or an LMS's import and feedback", parents=[course])
    step.add_argument("--output", type=Path, help=f"default: {GRADING_DIRECTORY}/{EXPORT_FILE} in the course")
    lms = formats()
    step.add_argument("--format", choices=("csv", *lms), default="csv",
                      help="csv: every column (default); " + "; ".join(f"{n}: {f.summary}" for n, f in lms.items()))
    step.add_argument("--feedback", action="store_true", help="an LMS format: send the feedback pages instead")
    for lms_format in lms.values():
        lms_format.add_arguments(step)
    step.set_defaults(run=run_export)

    step = commands.add_parser("report", help="class report HTML", parents=[course])
    step.add_argument("--output", type=Path, default=Path("report.html"))
    step.set_defaults(run=run_report)

    step = commands.add_parser(
        "similarity", help="rank pairs of answers closer than independent work explains", parents=[course]
    )
    step.add_argument("--assignment", nargs="+", action="extend", help="repeat or list several")
    step.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                      help="processes, one notebook each (default: 2, or 1 on one core)")
    step.add_argument("--output", type=Path, default=Path("similarity.html"))
    step.set_defaults(run=run_similarity)

    step = commands.add_parser("gradescope", help="Gradescope autograder zip for a notebook", parents=[course])
    step.add_argument("assignment", help="the notebook, as in solutions/ (01_attention)")
    step.add_argument("--output", type=Path, help="folder of the zip (default: build/gradescope under --root)")
    step.add_argument("--timeout", type=float, default=Limits.wall_seconds, help="wall-clock seconds per submission "
                      "(default: %(default)g; set Gradescope's own timeout above it)")
    step.add_argument("--cell-timeout", type=int, default=Limits.cell_timeout,
                      help="most seconds per cell (default: %(default)s)")
    step.set_defaults(run=run_gradescope)
    return main


def setting_option(config: Config, group: type[Configurable], name: str) -> dict[str, object]:
    """An option's type, help and default (``config``'s) from the setting it gives."""
    trait = group.class_traits()[name]
    return {"type": type(trait.default_value), "default": getattr(group(config=config), name),
            "help": f"{trait.help} ({group.__name__}.{name}; default: %(default)g)"}


def add_course_options(parser: argparse.ArgumentParser, root: object, grading_directory: object) -> None:
    """``--root`` and ``--grading-directory``, with these defaults (``argparse.SUPPRESS``: keep what was given)."""
    parser.add_argument("--root", type=Path, default=root,
                        help="course folder, before or after the command (default: this repository)")
    parser.add_argument("--grading-directory", default=grading_directory,
                        help=f"under --root (default: {GRADING_DIRECTORY})")


def use_this_environments_tools() -> None:
    """Put this interpreter's ``bin`` folder first on PATH: nbgrader runs ``alembic`` by name.

    Without it ``.venv/bin/python -m autograder grade`` fails unless the venv was activated.
    """
    tools = str(Path(sys.executable).parent)
    if os.environ.get("PATH", "").split(os.pathsep)[0] != tools:
        os.environ["PATH"] = os.pathsep.join([tools, os.environ.get("PATH", "")])


def main(argv: list[str] | None = None) -> int:
    use_this_environments_tools()
    argv = sys.argv[1:] if argv is None else argv
    settings = [arg for arg in argv if arg.startswith("--") and "." in arg.split("=", 1)[0]]  # --Class.trait=value
    given = [arg for arg in argv if arg not in settings]
    root = argparse.ArgumentParser(add_help=False)
    add_course_options(root, REPO_ROOT, GRADING_DIRECTORY)
    config = load_config(root.parse_known_args(given)[0].root, settings)
    args = parser(config).parse_args(given)
    logs.configure(args.log_level)
    ours = {name: dict(section) for name, section in config.items() if name.endswith("Settings")}
    log.debug(f"settings (the course's {CONFIG_FILE}, then {' '.join(settings) or 'no --Class.trait=value'}): {ours}")
    args.config = config
    args.course = Course(args.root, args.grading_directory)  # every command's paths and settings
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
