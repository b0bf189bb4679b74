"""``python -m classroom.clear_inbound``: remove what one account left in the exchange's inbound under another's name.

Run as root (``sudo make hub-clear-inbound``). Collect refuses every folder another account made under a student's
name (:meth:`autograder.pipeline.exchange.exchange_collect.SafeExchangeCollect.own`) but cannot remove it: the
inbound is sticky, so only the account that made an entry, or root, may. This removes each entry whose owner is
not the account its name begins with (or that no account owns), and nothing else, without following a link; what
it lists and ``--student``: docs/running-a-class.md (Folders made under another's name).
"""

import argparse
import logging
import os
import shutil
import stat
from pathlib import Path

from autograder import logs
from autograder.pipeline.exchange.exchange_collect import account_name, shown
from autograder.pipeline.exchange.handins import safe_name
from classroom.layout import COURSE_ID, DEFAULT_PREFIX, HubLayout

log = logging.getLogger(__name__)

def named_account(entry: str) -> str:
    """The account an inbound entry's name gives: what precedes its first ``+``."""
    return entry.split("+", 1)[0]


def debris(inbound: Path, student: str | None = None) -> list[tuple[str, str]]:
    """``[(entry, account that made it)]``: the entries of ``inbound`` whose owner is not the account their name
    gives; with ``student``, only those that name that student or that its account made."""
    found = []
    for entry in sorted(os.listdir(inbound)):
        try:
            maker = account_name(os.lstat(inbound / entry).st_uid)
        except FileNotFoundError:  # removed by its maker since it was listed
            continue
        if maker != named_account(entry) and student in (None, maker, named_account(entry)):
            found.append((entry, maker))
    return found


def remove(path: Path) -> None:
    """Remove an entry a student made: a folder with everything in it, else the entry itself (a link: not followed)."""
    if stat.S_ISDIR(os.lstat(path).st_mode):
        shutil.rmtree(path)  # resists a link swapped in while it runs (shutil.rmtree.avoids_symlink_attacks)
    else:
        path.unlink()


def clear_inbound(layout: HubLayout, student: str | None = None) -> list[tuple[str, str]]:
    """Remove the inbound's debris (:func:`debris`) and say what was removed: ``[(entry, maker)]``."""
    inbound = layout.exchange / COURSE_ID / "inbound"
    if not inbound.is_dir():
        raise SystemExit(f"{inbound} is not a folder: is {layout.prefix} the hub's prefix (make hub lays it out)?")
    removed = debris(inbound, student)
    for entry, _ in removed:
        try:
            remove(inbound / entry)
        except FileNotFoundError:
            pass  # its maker removed it first
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0].split(": ", 1)[1])
    parser.add_argument("--prefix", type=Path, default=DEFAULT_PREFIX, help="the hub's prefix (default: %(default)s)")
    parser.add_argument("--student", help="only the entries that name this student or that its account made")
    args = logs.parse_args(parser, argv)
    if os.geteuid() != 0:
        raise SystemExit("clear_inbound removes other accounts' entries from a sticky folder: run it as root")
    removed = clear_inbound(HubLayout(args.prefix), args.student)
    for entry, maker in removed:
        log.info(f"removed {shown(entry)} (made by {maker}, not by {safe_name(named_account(entry))})")
    only = f" (--student {args.student})" if args.student else ""
    log.info(f"{len(removed)} entries removed from the inbound{only}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
