"""Collect trusts nothing in a hand-in: links, pipes, sockets, odd names, size, the student's own time.

Here everything runs as one account (the test's), so ownership is left to the root-only attack
test (tests/classroom/test_exchange_attacks.py); every other rule is proven on real files.
"""

import json
import os
import socket
import stat
import time
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory

from autograder.cli import main
from autograder.course.course import Course
from autograder.course.deadlines import submitted_at
from autograder.pipeline import handins
from autograder.pipeline.collect import collect
from autograder.pipeline.exchange_collect import SafeExchangeCollect
from autograder.pipeline.export import export_frame
from autograder.pipeline.grade_job import GradeJob
from autograder.pipeline.handin_names import find_notebooks
from autograder.pipeline.handins import HandinLimits, RefusedHandin, copy_handin
from autograder.pipeline.refusals import load_refusals
from autograder.pipeline.results import Status, SubmissionResult
from autograder.pipeline.submission_files import read_notebooks
from tests.support.course import ThrowawayCourse

ASSIGNMENT = "01_attention"


def handin(folder: Path, notebook: str = '{"cells": []}', claimed: str = "2020-01-01 00:00:00.000000 UTC") -> Path:
    """A hand-in folder as nbgrader submit writes it, with the time the student claims."""
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text(notebook)
    (folder / "timestamp.txt").write_text(claimed)
    (folder / "submission_secret.txt").write_text("f" * 128)
    return folder


def test_a_plain_hand_in_is_copied_with_the_server_s_time(tmp_path: Path) -> None:
    source = handin(tmp_path / "in")
    (source / "extra").mkdir()
    (source / "extra" / "notes.txt").write_text("mine")
    before = time.time()
    copied = copy_handin(source, tmp_path / "out")
    assert (tmp_path / "out" / "extra" / "notes.txt").read_text() == "mine"
    assert (copied.files, copied.bytes) == (5, 13 + 30 + 128 + 4)  # four files and a folder
    assert abs(copied.changed - before) < 5, "the hand-in's time is its change time, not the claimed 2020"


@pytest.mark.parametrize("kind", ["link to a file", "link to a folder", "dangling link", "fifo", "socket"])
def test_anything_but_plain_files_and_folders_refuses_the_whole_hand_in(tmp_path: Path, kind: str) -> None:
    secret = tmp_path / "solution.ipynb"
    secret.write_text("THE SOLUTION")
    source = handin(tmp_path / "in")
    entry = source / "planted"
    if kind == "link to a file":
        entry.symlink_to(secret)
    elif kind == "link to a folder":
        entry.symlink_to(tmp_path)
    elif kind == "dangling link":
        entry.symlink_to(tmp_path / "nothing")
    elif kind == "fifo":
        os.mkfifo(entry)
    else:
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(entry))
    with pytest.raises(RefusedHandin, match="plain files and folders only"):
        copy_handin(source, tmp_path / "out")
    assert not (tmp_path / "out").exists(), "a refused hand-in left a partial copy"


def test_the_hand_in_folder_itself_may_not_be_a_link(tmp_path: Path) -> None:
    real = handin(tmp_path / "real")
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(RefusedHandin, match="not a folder that can be opened"):
        copy_handin(tmp_path / "link", tmp_path / "out")


def test_a_file_turned_into_a_link_after_it_was_listed_is_refused(tmp_path: Path, monkeypatch) -> None:
    """The race a careful attacker tries: listed as a file, swapped for a link before it is opened."""
    secret = tmp_path / "solution.ipynb"
    secret.write_text("THE SOLUTION")
    source = handin(tmp_path / "in")
    notebook = source / f"{ASSIGNMENT}.ipynb"
    real_stat = os.stat

    def stat_then_swap(path, *args, **kwargs):
        info = real_stat(path, *args, **kwargs)
        if path == notebook.name and stat.S_ISREG(info.st_mode):
            notebook.unlink()
            notebook.symlink_to(secret)
        return info

    monkeypatch.setattr(handins.os, "stat", stat_then_swap)
    with pytest.raises(RefusedHandin, match="changed while it was read"):
        copy_handin(source, tmp_path / "out")


def test_names_with_control_characters_are_refused_and_shown_escaped(tmp_path: Path) -> None:
    source = handin(tmp_path / "in")
    (source / "x\nINFO forged log line").write_text("")
    with pytest.raises(RefusedHandin, match=r"x\\nINFO") as refused:
        copy_handin(source, tmp_path / "out")
    assert "\n" not in str(refused.value)


def test_the_instructor_s_limits_refuse_too_many_files_or_bytes(tmp_path: Path) -> None:
    source = handin(tmp_path / "in", notebook="x" * 5000)
    for index in range(3):
        (source / f"f{index}").write_text("")
    with pytest.raises(RefusedHandin, match="more than 5 files and folders"):
        copy_handin(source, tmp_path / "a", limits=HandinLimits(max_files=5))
    with pytest.raises(RefusedHandin, match="more than 4,000 bytes"):
        copy_handin(source, tmp_path / "b", limits=HandinLimits(max_bytes=4000))
    copy_handin(source, tmp_path / "c", limits=HandinLimits(max_bytes=6000, max_files=6))


def test_folders_nested_too_deep_are_refused_not_walked(tmp_path: Path) -> None:
    source = handin(tmp_path / "in")
    deep = source.joinpath(*["d"] * (handins.MAX_DEPTH + 2))
    deep.mkdir(parents=True)
    with pytest.raises(RefusedHandin, match="nested more than"):
        copy_handin(source, tmp_path / "out", limits=HandinLimits(max_files=1000))
    shallow = handin(tmp_path / "shallow")
    shallow.joinpath(*["d"] * handins.MAX_DEPTH).mkdir(parents=True)
    assert copy_handin(shallow, tmp_path / "ok").files == 3 + handins.MAX_DEPTH  # as deep as allowed: copied


def test_an_lms_download_with_a_link_or_an_oversized_file_collects_the_rest(
    tmp_path: Path, throwaway_course: ThrowawayCourse
) -> None:
    course = throwaway_course(ASSIGNMENT)
    good = nbformat.writes(nbformat.v4.new_notebook())
    secret = tmp_path / "solution.ipynb"
    secret.write_text(good + " ")
    folder = tmp_path / "download"
    folder.mkdir()
    (folder / f"ann_1_{ASSIGNMENT}.ipynb").write_text(good)
    (folder / f"bob_2_{ASSIGNMENT}.ipynb").symlink_to(secret)
    (folder / f"cy_3_{ASSIGNMENT}.ipynb").write_text(good + " " * 3000)
    found = collect(folder, course, limits=HandinLimits(max_bytes=2000))
    assert [student for student, _, _ in found.collected] == ["ann"]
    reasons = {refusal.student: refusal.reason for refusal in found.refused}
    assert "link" in reasons["bob"] and "2,000 bytes" in reasons["cy"], reasons
    assert {r.student for r in load_refusals(course.grading.path)} == {"bob", "cy"}
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr(f"dee_4_{ASSIGNMENT}.ipynb", good)
        link = zipfile.ZipInfo(f"eve_5_{ASSIGNMENT}.ipynb")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        handle.writestr(link, str(secret))
    found = collect(archive, course)
    assert [student for student, _, _ in found.collected] == ["dee"]
    assert [refusal.student for refusal in found.refused] == ["eve"]


def exchange_collect(course: Course, exchange: Path, update: bool = True) -> SafeExchangeCollect:
    config = course.config()
    config.Exchange.root = str(exchange)
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = ASSIGNMENT
    app = SafeExchangeCollect(coursedir=coursedir, authenticator=Authenticator(config=config), config=config)
    app.update = update
    app.start()
    return app


def test_the_exchange_collect_takes_the_latest_good_hand_in_at_the_server_s_time(
    tmp_path: Path, throwaway_course: ThrowawayCourse
) -> None:
    course = throwaway_course(ASSIGNMENT)
    inbound = tmp_path / "exchange" / "transformers-from-scratch" / "inbound"
    secret = tmp_path / "solution.ipynb"
    secret.write_text("THE SOLUTION")
    good = handin(inbound / f"ann+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+aaaa", notebook="GOOD")
    time.sleep(0.05)
    # Later, with a time in its name far in the future, and a link to the solution: refused, and the good one stays.
    later = handin(inbound / f"ann+{ASSIGNMENT}+2099-01-01 00:00:00.000000 UTC+bbbb", claimed="2000-01-01 UTC")
    (later / f"{ASSIGNMENT}.ipynb").unlink()
    (later / f"{ASSIGNMENT}.ipynb").symlink_to(secret)
    handin(inbound / f"bob+{ASSIGNMENT}+not a time at all+cccc", notebook="BOB")  # nbgrader's own collect stops here
    (inbound / f"cy+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+dddd").symlink_to(good)
    app = exchange_collect(course, tmp_path / "exchange")
    ann = course.grading.submitted("ann", ASSIGNMENT)
    assert (ann / f"{ASSIGNMENT}.ipynb").read_text() == "GOOD"
    assert (course.grading.submitted("bob", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb").read_text() == "BOB"
    assert not course.grading.submitted("cy", ASSIGNMENT).exists()
    server_time = submitted_at(ann)
    assert abs(server_time.timestamp() - good.stat().st_ctime) < 1, (server_time, "the name said 2026-01-01 10:00")
    refused = {(r.student, r.found.split("+")[-1]): r.reason for r in load_refusals(course.grading.path)}
    assert set(refused) == {("ann", "bbbb"), ("cy", "dddd")}, refused
    assert "link" in refused["ann", "bbbb"] and "link" in refused["cy", "dddd"]
    assert [r.student for r in app.refused] == ["ann", "cy"]
    assert not list(course.grading.path.glob(".collect-*")), "the staging folder was left behind"


def test_a_collected_hand_in_is_replaced_only_by_a_later_good_one(tmp_path: Path, throwaway_course) -> None:
    course = throwaway_course(ASSIGNMENT)
    inbound = tmp_path / "exchange" / "transformers-from-scratch" / "inbound"
    handin(inbound / f"ann+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+aaaa", notebook="FIRST")
    exchange_collect(course, tmp_path / "exchange")
    first = submitted_at(course.grading.submitted("ann", ASSIGNMENT))
    time.sleep(0.05)
    bad = handin(inbound / f"ann+{ASSIGNMENT}+2026-01-01 09:00:00.000000 UTC+bbbb", notebook="SECOND")
    os.mkfifo(bad / "pipe")
    exchange_collect(course, tmp_path / "exchange")
    assert (course.grading.submitted("ann", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb").read_text() == "FIRST"
    time.sleep(0.05)
    handin(inbound / f"ann+{ASSIGNMENT}+2000-01-01 00:00:00.000000 UTC+cccc", notebook="THIRD")  # an old time claimed
    exchange_collect(course, tmp_path / "exchange")
    placed = course.grading.submitted("ann", ASSIGNMENT)
    assert (placed / f"{ASSIGNMENT}.ipynb").read_text() == "THIRD" and submitted_at(placed) > first
    assert json.loads((course.grading.path / "refused_handins.json").read_text())[0]["found"].endswith("bbbb")


def test_the_export_lists_each_refusal_and_the_students_left_with_none(tmp_path: Path, throwaway_course) -> None:
    course = throwaway_course(ASSIGNMENT)
    inbound = tmp_path / "exchange" / "transformers-from-scratch" / "inbound"
    bad = handin(inbound / f"cy+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+dddd")
    (bad / "link").symlink_to("/etc/passwd")
    exchange_collect(course, tmp_path / "exchange")
    frame = export_frame(course).set_index("student")
    assert frame.loc["cy", "status"] == "missing" and "refused" in frame.loc["cy", "reason"]
    assert "symbolic link" in frame.loc["cy", "refused"]


def named(suffix: str = "", notebook: str = ASSIGNMENT) -> str:
    """``notebook``'s file name, ``suffix`` before the extension: ``named(" (1)")`` is ``01_attention (1).ipynb``."""
    return f"{notebook}{suffix}.ipynb"


# The names an LMS or a browser gives a copy (autograder/pipeline/handin_names.py), and names close to them that no
# LMS gives: those are never taken for the notebook.
COPIES = [named(" (1)"), named("(2)"), named("-1"), named(" (1)-2")]
LOOK_ALIKES = [named("_old"), named(" copy"), named("-Copy1"), named(" (one)"), f"x{named()}",
               named(" (1)", "02_multi_head_attention"), named("", "02_multi_head_attention")]  # fmt: skip


def hand_in_folder(folder: Path, *names: str) -> Path:
    """A hand-in folder holding a notebook under each of ``names``, written in this order (1 s apart in time)."""
    folder.mkdir(parents=True)
    for index, name in enumerate(names):
        (folder / name).write_text(nbformat.writes(nbformat.v4.new_notebook(metadata={"handed_in_as": name})))
        os.utime(folder / name, (1e9 + index, 1e9 + index))
    return folder


@pytest.mark.parametrize("name", COPIES)
def test_a_notebook_handed_in_under_a_copy_s_name_is_taken_and_said(tmp_path: Path, name: str) -> None:
    files = find_notebooks(hand_in_folder(tmp_path / "alice", name), [ASSIGNMENT])
    assert files.taken == {ASSIGNMENT: name}
    assert files.notes() == [f"took {name!r} as {named()}"]


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_a_look_alike_or_another_notebook_s_copy_is_never_taken_and_is_listed(tmp_path: Path, name: str) -> None:
    files = find_notebooks(hand_in_folder(tmp_path / "alice", name), [ASSIGNMENT])
    assert files.taken == {} and list(files.ignored) == [name]
    assert files.notes()[0].startswith(f"ignored {name!r} (not ")


@pytest.mark.parametrize(
    ("names", "taken"),
    [
        ([named(), named(" (1)"), named("-2")], named()),  # its own name, though the copies are newer
        ([named(" (10)"), named(" (2)"), named(" (1)")], named(" (10)")),  # the highest number, not the newest file
        ([named("-2"), named("-1")], named("-2")),
        ([named(" (1)"), named("(1)")], named("(1)")),  # the same number: the newest file
    ],
)
def test_of_several_copies_the_own_name_then_the_latest_copy_is_taken(
    tmp_path: Path, names: list[str], taken: str
) -> None:
    files = find_notebooks(hand_in_folder(tmp_path / "alice", *names), [ASSIGNMENT])
    assert files.taken == {ASSIGNMENT: taken}
    assert set(files.ignored) == set(names) - {taken}
    assert all(why == f"{taken!r} was taken as {named()}" for why in files.ignored.values())


def test_a_link_under_the_notebook_s_name_is_not_read_and_odd_names_are_shown_escaped(tmp_path: Path) -> None:
    secret = tmp_path / "solution.ipynb"
    secret.write_text("THE SOLUTION")
    folder = hand_in_folder(tmp_path / "alice", named("\nINFO forged"))
    (folder / named()).symlink_to(secret)
    (folder / named(" (1)")).mkdir()
    files = find_notebooks(folder, [ASSIGNMENT])
    assert files.taken == {}
    assert "not a plain file" in files.ignored[named()] and "not a plain file" in files.ignored[named(" (1)")]
    assert not any("\n" in note for note in files.notes()) and any("\\nINFO" in note for note in files.notes())


def test_grade_reads_a_notebook_handed_in_under_a_copy_s_name(
    tmp_path: Path, throwaway_course: ThrowawayCourse
) -> None:
    course = throwaway_course(ASSIGNMENT)
    folder = hand_in_folder(tmp_path / "alice", named(" (1)"), named("_old"))
    job = GradeJob(course, ASSIGNMENT, "alice", folder, tmp_path / "template.db")
    result = SubmissionResult(ASSIGNMENT, "alice", Status.GRADED)
    notebooks, problems = read_notebooks(job, [ASSIGNMENT], result)
    assert problems == [] and notebooks[ASSIGNMENT].metadata["handed_in_as"] == named(" (1)")
    took, ignored = result.files
    assert took == f"took {named(' (1)')!r} as {named()}"
    assert ignored == f"ignored {named('_old')!r} (not a name an LMS or a browser gives a copy of {named()})"
    _, problems = read_notebooks(job, [ASSIGNMENT, "02_multi_head_attention"], result)
    assert problems == ["02_multi_head_attention.ipynb not submitted"]


def test_collect_takes_copies_names_in_folders_and_canvas_and_moodle_names(
    tmp_path: Path, throwaway_course: ThrowawayCourse, capsys: pytest.CaptureFixture[str]
) -> None:
    course = throwaway_course(ASSIGNMENT)
    download = tmp_path / "download"
    hand_in_folder(download / "alice", named(" (1)"))
    hand_in_folder(download / "bob", named(), named(" (1)"))  # the copy is the newer file
    hand_in_folder(download / "cy", named("-2"), named("-1"))  # -1 is the newer file
    hand_in_folder(download / "dee", named("_old"))
    hand_in_folder(download / "eve", named(" (1)", "02_multi_head_attention"))
    hand_in_folder(download / "Ann Lee_42_assignsubmission_file_", named(" (2)"))  # Moodle, a folder per student
    hand_in_folder(download / "canvas", f"smithjane_1234_5678_{named(' (1)-1')}")
    (download / "canvas" / f"smithjane_1234_5678_{named(' (1)-1')}").rename(
        download / f"smithjane_1234_5678_{named(' (1)-1')}"
    )  # Canvas: every file in one folder

    assert main(["collect", str(download), "--root", str(course.root)]) == 0  # --root after the command

    out = capsys.readouterr().out
    taken = {student: name for student, _, name in collect(download, course).collected}
    assert taken == {
        "alice": f"alice/{named(' (1)')}",
        "bob": f"bob/{named()}",
        "cy": f"cy/{named('-2')}",
        "Ann_Lee": f"Ann Lee_42_assignsubmission_file_/{named(' (2)')}",
        "smithjane": f"smithjane_1234_5678_{named(' (1)-1')}",
    }
    for student, name in taken.items():
        placed = nbformat.read(course.grading.submitted(student, ASSIGNMENT) / named(), as_version=4)
        assert placed.metadata["handed_in_as"] == PurePosixPath(name).name, student
    assert f"alice: took 'alice/{named(' (1)')}' as {named()}" in out
    assert f"bob: ignored 'bob/{named(' (1)')}' ('bob/{named()}' was taken as {named()})" in out
    assert f"cy: ignored 'cy/{named('-1')}' ('cy/{named('-2')}' was taken as {named()})" in out
    assert f"unmatched  dee/{named('_old')}" in out and "unmatched  eve/02_multi_head_attention (1).ipynb" in out
    assert "(canvas 1234)" in out and "(moodle 42)" in out
    assert "5 collected, 2 unmatched, 0 unreadable, 0 refused, 2 not taken" in out
