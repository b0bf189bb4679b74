"""Collect trusts nothing in a hand-in: links, pipes, sockets, odd names, size, the student's own time.

Here everything runs as one account (the test's), so ownership is left to the root-only attack
test (tests/classroom/test_exchange_attacks.py); every other rule is proven on real files.
"""

import json
import logging
import os
import socket
import stat
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from nbgrader.auth import Authenticator
from nbgrader.coursedir import CourseDirectory

from autograder.cli import main
from autograder.course.course import Course
from autograder.course.deadlines import submitted_at
from autograder.pipeline.commands.collect import collect
from autograder.pipeline.commands.export import export_frame, refusal_text
from autograder.pipeline.exchange import exchange_collect as exchange_collect_module
from autograder.pipeline.exchange import handins
from autograder.pipeline.exchange.exchange_collect import SafeExchangeCollect
from autograder.pipeline.exchange.handin_names import find_notebooks
from autograder.pipeline.exchange.handins import HandinLimits, RefusedHandin, copy_handin, measure_handin
from autograder.pipeline.job.grade_job import GradeJob
from autograder.pipeline.job.submission_files import read_notebooks
from autograder.pipeline.storage.refusals import (
    Refusal,
    live_refusals,
    load_refusals,
    record_refusals,
    refusals_by_submission,
)
from autograder.pipeline.storage.results import Status, SubmissionResult
from tests.support.course import ThrowawayCourse
from tests.support.small_disk import small_disk

ASSIGNMENT = "01_attention"
MIB = 1 << 20


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
    """The race a careful attacker tries: measured and listed as a file, swapped for a link before it is opened."""
    secret = tmp_path / "solution.ipynb"
    secret.write_text("THE SOLUTION")
    source = handin(tmp_path / "in")
    notebook = source / f"{ASSIGNMENT}.ipynb"
    real_stat = os.stat
    seen = []

    def stat_then_swap(path, *args, **kwargs):
        info = real_stat(path, *args, **kwargs)
        seen.append(path)
        if path == notebook.name and seen.count(path) == 2:  # the copy's look, after the measure's
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
    # Each file counts for the larger of its size and the disk it takes (4,096-byte blocks here).
    counted = sum(handins.footprint(path.lstat()) for path in source.iterdir())
    assert counted >= 5000 + 30 + 128
    with pytest.raises(RefusedHandin, match="more than"):
        copy_handin(source, tmp_path / "c", limits=HandinLimits(max_bytes=counted - 1, max_files=6))
    assert not (tmp_path / "c").exists()
    copy_handin(source, tmp_path / "c", limits=HandinLimits(max_bytes=counted, max_files=6))


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
    (folder / f"cy_3_{ASSIGNMENT}.ipynb").write_text(good + " " * 20000)
    found = collect(folder, course, limits=HandinLimits(max_bytes=10000))
    assert [student for student, _, _ in found.collected] == ["ann"]
    reasons = {refusal.student: refusal.reason for refusal in found.refused}
    assert "link" in reasons["bob"] and "10,000 bytes" in reasons["cy"], reasons
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


def exchange_collect(
    course: Course, exchange: Path, update: bool = True, submitted: str = "", **settings: object
) -> SafeExchangeCollect:
    """nbgrader's collect as formgrader runs it, with ``settings`` of ``SafeExchangeCollect`` (``max_bytes=...``);
    ``submitted``: another submitted folder (relative to the course), whose parent then holds the staging."""
    config = course.config()
    config.Exchange.root = str(exchange)
    if submitted:
        config.CourseDirectory.submitted_directory = submitted
    for name, value in settings.items():
        setattr(config.SafeExchangeCollect, name, value)
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
    assert [r.found[-4:] for r in load_refusals(course.grading.path)] == ["bbbb"], "a live problem: her latest"
    time.sleep(0.05)
    handin(inbound / f"ann+{ASSIGNMENT}+2000-01-01 00:00:00.000000 UTC+cccc", notebook="THIRD")  # an old time claimed
    exchange_collect(course, tmp_path / "exchange")
    placed = course.grading.submitted("ann", ASSIGNMENT)
    assert (placed / f"{ASSIGNMENT}.ipynb").read_text() == "THIRD" and submitted_at(placed) > first
    assert live_refusals(course.grading.path) == [], "a refusal of a hand-in older than the one taken is past history"
    (kept,) = json.loads((course.grading.path / "refused_handins.json").read_text())  # kept, for the record
    assert kept["found"].endswith("bbbb") and kept["superseded"] == submitted_at(placed).isoformat(), kept


def test_the_export_lists_each_refusal_and_the_students_left_with_none(tmp_path: Path, throwaway_course) -> None:
    course = throwaway_course(ASSIGNMENT)
    inbound = tmp_path / "exchange" / "transformers-from-scratch" / "inbound"
    bad = handin(inbound / f"cy+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+dddd")
    (bad / "link").symlink_to("/etc/passwd")
    exchange_collect(course, tmp_path / "exchange")
    frame = export_frame(course).set_index("student")
    assert frame.loc["cy", "status"] == "missing" and "refused" in frame.loc["cy", "reason"]
    assert "symbolic link" in frame.loc["cy", "refused"]


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes (almost) no disk: what a student makes with ``truncate -s``."""
    with path.open("wb") as handle:
        handle.truncate(size)
    if path.lstat().st_blocks * 512 >= MIB:
        pytest.skip(f"{path.parent} is on a filesystem that keeps no sparse files")
    return path


def test_a_file_counts_for_the_larger_of_its_size_and_the_disk_it_takes(tmp_path: Path, monkeypatch) -> None:
    source = handin(tmp_path / "in")
    sparse(source / "weights.bin", 63 * MIB)
    opened = []
    monkeypatch.setattr(handins._Walk, "file", lambda self, *args: opened.append(args))
    with pytest.raises(RefusedHandin, match="more than 1,048,576 bytes") as refused:
        copy_handin(source, tmp_path / "out", limits=HandinLimits(max_bytes=MIB))
    assert refused.value.rule == "bytes" and opened == [], "a sparse hand-in over the limit must be refused unread"
    assert not (tmp_path / "out").exists()
    # The reverse: small files take whole blocks of disk, and count for them.
    small = handin(tmp_path / "small")
    for index in range(10):
        (small / f"part{index}.txt").write_text("x")
    infos = [path.lstat() for path in small.iterdir()]
    apparent, taken = sum(info.st_size for info in infos), sum(info.st_blocks * 512 for info in infos)
    if taken <= apparent:
        pytest.skip("this filesystem gives small files no whole blocks")
    assert measure_handin(small).bytes == sum(max(i.st_size, i.st_blocks * 512) for i in infos)
    with pytest.raises(RefusedHandin, match="more than"):
        measure_handin(small, limits=HandinLimits(max_bytes=(apparent + taken) // 2))


def staged_bytes(grading: Path) -> int:
    """The bytes of every file in collect's staging folders right now."""
    return sum(path.lstat().st_size for path in grading.glob(".collect-*/**/*") if path.is_file())


def test_a_flood_of_hand_ins_costs_collect_one_staged_copy_and_one_short_export_cell(
    tmp_path: Path, throwaway_course: ThrowawayCourse, monkeypatch
) -> None:
    """30 good hand-ins of 1 MiB (Ann) and 30 sparse ones of 63 MiB (Bob): Ann's newest is the one copy made."""
    course = throwaway_course(ASSIGNMENT)
    inbound = tmp_path / "exchange" / "transformers-from-scratch" / "inbound"
    for index in range(30):
        if index == 29:
            time.sleep(0.05)  # the newest, by the kernel's change time (its clock ticks in milliseconds)
        folder = handin(inbound / f"ann+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+a{index:02}", f"ANN {index}")
        (folder / "data.bin").write_bytes(bytes([index]) * MIB)
    for index in range(30):
        sparse(handin(inbound / f"bob+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+b{index:02}") / "w.bin", 63 * MIB)
    copies, peak = [], [0]
    real_copy = exchange_collect_module.copy_handin

    def watched(source: Path, target: Path, *args, **kwargs):
        copies.append(Path(source).name[-3:])
        try:
            return real_copy(source, target, *args, **kwargs)
        finally:
            peak[0] = max(peak[0], staged_bytes(course.grading.path))

    monkeypatch.setattr(exchange_collect_module, "copy_handin", watched)
    app = exchange_collect(course, tmp_path / "exchange", max_bytes=2 * MIB, max_handins=10)
    assert (course.grading.submitted("ann", ASSIGNMENT) / f"{ASSIGNMENT}.ipynb").read_text() == "ANN 29"
    assert copies == ["a29"], "only Ann's newest is copied; Bob's sparse ones are refused before a byte is staged"
    assert MIB <= peak[0] < 2 * MIB, f"{peak[0]:,} bytes staged at once: more than one hand-in"
    bob = [refusal.reason for refusal in app.refused if refusal.student == "bob"]
    assert len(bob) == 11 and bob[0].startswith("20 older hand-ins not looked at"), bob[:2]
    assert all("more than 2,097,152 bytes" in reason for reason in bob[1:])
    assert any(r.student == "ann" for r in app.refused), "Ann's 20 older hand-ins are counted in one line"
    assert {r.student for r in live_refusals(course.grading.path)} == {"bob"}, "Ann's taken hand-in supersedes"
    cell = export_frame(course).set_index("student").loc["bob", "refused"]
    assert len(cell) < 1000 and cell.endswith("and 8 more (grading/refused_handins.json)"), cell


def test_each_refused_copy_leaves_staging_before_the_next_is_copied(
    tmp_path: Path, throwaway_course: ThrowawayCourse, monkeypatch
) -> None:
    """Five hand-ins of 3 MiB (sparse in the exchange, written whole when copied), each refused once copied (no
    secret): staging never holds more than one of them."""
    course = throwaway_course(ASSIGNMENT)
    inbound = tmp_path / "exchange" / "transformers-from-scratch" / "inbound"
    for index in range(5):
        folder = handin(inbound / f"ann+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+a{index:02}")
        (folder / "submission_secret.txt").unlink()
        sparse(folder / "w.bin", 3 * MIB)
    peaks = []
    real_copy = exchange_collect_module.copy_handin

    def watched(source: Path, target: Path, *args, **kwargs):
        try:
            return real_copy(source, target, *args, **kwargs)
        finally:
            peaks.append(staged_bytes(course.grading.path))

    monkeypatch.setattr(exchange_collect_module, "copy_handin", watched)
    app = exchange_collect(course, tmp_path / "exchange", max_bytes=4 * MIB)
    assert len(peaks) == 5 and not course.grading.submitted("ann", ASSIGNMENT).exists()
    assert all("no submission_secret.txt" in refusal.reason for refusal in app.refused) and len(app.refused) == 5
    assert 3 * MIB <= max(peaks) < 4 * MIB, f"bytes staged after each copy: {peaks} (one copy is {3 * MIB:,})"


def test_a_full_disk_fails_that_hand_in_keeps_the_collected_copy_and_collects_the_others(
    tmp_path: Path, throwaway_course: ThrowawayCourse, caplog: pytest.LogCaptureFixture
) -> None:
    course = throwaway_course(ASSIGNMENT)
    disk = course.root / "small-disk"
    with small_disk(disk, "4m"):
        exchange = tmp_path / "exchange"
        inbound = exchange / "transformers-from-scratch" / "inbound"
        ann = disk / "submitted" / "ann" / ASSIGNMENT
        first = handin(inbound / f"ann+{ASSIGNMENT}+2026-01-01 10:00:00.000000 UTC+aaaa", notebook="FIRST")
        (first / "data.bin").write_bytes(b"1" * MIB)
        exchange_collect(course, exchange, submitted="small-disk/submitted")
        assert (ann / f"{ASSIGNMENT}.ipynb").read_text() == "FIRST"
        free = os.statvfs(disk)
        (disk / "filler").write_bytes(b"0" * (free.f_bavail * free.f_frsize - MIB // 2))  # half a MiB left
        time.sleep(0.05)
        second = handin(inbound / f"ann+{ASSIGNMENT}+2026-01-01 11:00:00.000000 UTC+bbbb", notebook="SECOND")
        (second / "data.bin").write_bytes(b"2" * MIB)
        handin(inbound / f"bob+{ASSIGNMENT}+2026-01-01 11:00:00.000000 UTC+cccc", notebook="BOB")
        with caplog.at_level(logging.INFO):
            exchange_collect(course, exchange, submitted="small-disk/submitted")
        assert (ann / f"{ASSIGNMENT}.ipynb").read_text() == "FIRST" and (ann / "data.bin").read_bytes() == b"1" * MIB
        assert (disk / "submitted" / "bob" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text() == "BOB"
        assert "is full (No space left on device)" in caplog.text and "bbbb" not in caplog.text
        assert not list(disk.glob(".collect-*")), "a staging folder was left on the full disk"
        (refusal,) = load_refusals(disk)
        assert refusal.student == "ann" and "disk is full" in refusal.reason
        (disk / "filler").unlink()
        exchange_collect(course, exchange, submitted="small-disk/submitted")
        assert (ann / f"{ASSIGNMENT}.ipynb").read_text() == "SECOND" and live_refusals(disk) == []


def test_a_refusal_older_than_the_hand_in_taken_is_superseded_and_a_newer_one_stays(tmp_path: Path) -> None:
    taken = datetime(2026, 1, 1, 10, tzinfo=UTC)

    def refusal(found: str, changed: datetime | None, student: str = "ann") -> Refusal:
        return Refusal(student, ASSIGNMENT, "a link", found, "2026-01-01T12:00:00+00:00",
                       changed.isoformat() if changed else "")

    older, newer = refusal("old", taken - timedelta(minutes=1)), refusal("new", taken + timedelta(minutes=1))
    same, lms, other = refusal("taken", taken), refusal("download.ipynb", None), refusal("x", taken, "bob")
    record_refusals(tmp_path, [older, newer, same, lms, other])
    assert len(load_refusals(tmp_path)) == 5, "nothing is taken yet: every refusal is a live problem"
    record_refusals(tmp_path, [], {(ASSIGNMENT, "ann"): (taken, "taken")})
    assert {entry.found for entry in live_refusals(tmp_path)} == {"new", "download.ipynb", "x"}
    marks = {entry.found: entry.superseded for entry in load_refusals(tmp_path)}
    assert marks["old"] == marks["taken"] == taken.isoformat() and marks["new"] == "", marks
    assert set(refusals_by_submission(tmp_path)) == {(ASSIGNMENT, "ann"), (ASSIGNMENT, "bob")}
    assert {r.found for r in refusals_by_submission(tmp_path)[ASSIGNMENT, "ann"]} == {"new", "download.ipynb"}


def test_the_refused_cell_shows_the_newest_three_reasons_cut_short_and_counts_the_rest() -> None:
    refusals = [Refusal("ann", ASSIGNMENT, f"reason {index} " + "x" * 5000, str(index), f"t{index:04}")
                for index in range(1000)]
    cell = refusal_text(refusals)
    assert cell.startswith("t0999: reason 999 ") and "t0997: reason 997" in cell and "t0996" not in cell
    assert cell.endswith("and 997 more (grading/refused_handins.json)") and len(cell) < 1000, len(cell)
    assert refusal_text(refusals[:1]) == "t0000: reason 0 " + "x" * 190 + "…"  # 200 characters


def named(suffix: str = "", notebook: str = ASSIGNMENT) -> str:
    """``notebook``'s file name, ``suffix`` before the extension: ``named(" (1)")`` is ``01_attention (1).ipynb``."""
    return f"{notebook}{suffix}.ipynb"


# The names an LMS or a browser gives a copy (autograder/pipeline/exchange/handin_names.py), and names close to them
# that no LMS gives: those are never taken for the notebook.
COPIES = [named(" (1)"), named("(2)"), named("-1"), named(" (1)-2")]
LOOK_ALIKES = [named("_old"), named(" copy"), named("-Copy1"), named(" (one)"), f"x{named()}",
               named(" (1)", "02_multi_head_attention"), named("", "02_multi_head_attention")]


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
