"""``python -m editions status LANGUAGE``, ``todo LANGUAGE ASSIGNMENT``, ``release LANGUAGE`` and ``messages LANGUAGE``.

Each command's ``--help`` says what it does; docs/editions.md, when to run it. ``messages`` brings every catalog up
to date: the notebooks' and :mod:`tfcourse`'s (``tfcourse/locale/LANGUAGE/*.po``), the hidden tests' messages
(``autograder/locale/LANGUAGE/*.po``), the feedback page's and the hub's words (``autograder/pipeline/locale/``,
``classroom/locale/``).
"""

import argparse

from autograder.course.hidden_messages import LOCALE as HIDDEN_LOCALE
from autograder.course.settings import REPO_ROOT, assignment_ids
from editions.messages import hidden_sources, interface_sources, sources, untranslated, update
from editions.release import write_release
from editions.translations import english_hash, load, markdown_cells
from tfcourse.messages import LOCALE
from tfcourse.registry import editions


def status(language: str) -> int:
    incomplete = 0
    for assignment in assignment_ids():
        english, translated = markdown_cells(assignment), load(language, assignment)
        stale = sum(
            1 for i, text in english.items() if i in translated and translated[i].english_hash != english_hash(text)
        )
        missing = sum(1 for i in english if i not in translated)
        orphans = sum(1 for i in translated if i not in english)
        current = len(english) - stale - missing
        print(f"{assignment}: {current}/{len(english)} current, {stale} stale, {missing} missing, {orphans} orphaned")
        incomplete += stale + missing + orphans
    return 1 if incomplete else 0


def todo(language: str, assignment: str) -> int:
    translated = load(language, assignment)
    for cell_id, text in markdown_cells(assignment).items():
        entry = translated.get(cell_id)
        if entry is None or entry.english_hash != english_hash(text):
            state = "missing" if entry is None else "stale"
            print(f"=== {cell_id} ({state}) en: {english_hash(text)}\n{text}\n")
    return 0


def release(language: str) -> int:
    for assignment, english in write_release(language):
        state = "complete" if not english else f"{english} Markdown cells left in English (missing or stale)"
        print(f"{editions()[language].release}/{assignment}: {state}")
    return 0


def messages(language: str, names: list[str]) -> int:
    left = 0
    interface = [(f"{locale.relative_to(REPO_ROOT)}/", locale, {name: found}) for (locale, name), found in
                 interface_sources().items()]
    for kind, locale, catalogs in (("", LOCALE, sources()), ("hidden tests of ", HIDDEN_LOCALE, hidden_sources()),
                                   *interface):
        for name, found in catalogs.items():
            if names and name not in names:
                continue
            missing = untranslated(update(language, name, found, locale))
            print(f"{kind}{name}: {len(found)} messages, {len(missing)} untranslated or fuzzy")
            left += len(missing)
    return 1 if left else 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m editions", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("status", help="translated, stale and missing cells per notebook").add_argument("language")
    todo_parser = commands.add_parser("todo", help="the English of each stale or missing cell of one notebook")
    todo_parser.add_argument("language")
    todo_parser.add_argument("assignment")
    commands.add_parser("release", help="write the translated student release").add_argument("language")
    messages_parser = commands.add_parser("messages", help="update the message catalogs, count what is untranslated")
    messages_parser.add_argument("language")
    messages_parser.add_argument("catalogs", nargs="*", help="only these (a notebook's name, or tfcourse)")
    args = parser.parse_args()
    if args.command == "messages":
        return messages(args.language, args.catalogs)
    if args.command == "release":
        return release(args.language)
    return status(args.language) if args.command == "status" else todo(args.language, args.assignment)


if __name__ == "__main__":
    raise SystemExit(main())
