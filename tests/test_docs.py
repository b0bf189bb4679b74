"""The documentation: README.md and docs/*.md, and the site `make docs` renders from them.

Every page renders, is listed in every page's navigation and says whom it is for in its first
line; every link between the pages (anchors included) and to the repository's files resolves;
and every command the pages name exists as written: a `make` target of the Makefile, a
`python -m` module with its subcommand and options, a script with its options. Running the
instructor's grading block as written is `tests/grader/test_readme_commands.py`'s job.
"""

import ast
import importlib.util
import re
import shlex
from pathlib import Path
from urllib.parse import unquote

import pytest
from bs4 import BeautifulSoup

from book import docs
from book.docs import README, REPO_ROOT

MARKDOWN_FILES = [README, *sorted(docs.DOCS.glob("*.md"))]
FENCED_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
MAKE_TARGET = re.compile(r"^([A-Za-z][\w-]*):(?!=)", re.M)
SETTING = re.compile(r"--[A-Z]\w*\.\w+=")  # --GradeSettings.jobs=4: a setting, which every command takes


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("docs")
    docs.build(output)
    return output

def parsed(site: Path, name: str) -> BeautifulSoup:
    return BeautifulSoup((site / name).read_text(), "html.parser")


def test_every_markdown_page_is_rendered_and_listed_on_every_page(site: Path):
    names = [page.file_name for page in docs.pages()]
    assert names[0] == "index.html" and len(names) == len(MARKDOWN_FILES)
    for name in names:
        page = parsed(site, name)
        listed = [a["href"] for a in page.select("nav a[href]")]
        assert listed == names, f"{name}: its navigation lists {listed}"
        assert page.find("main").find("h1"), f"{name}: no heading rendered"


def test_every_guide_says_whom_it_is_for_in_its_first_line():
    for path in MARKDOWN_FILES[1:]:
        first = path.read_text().splitlines()[0]
        assert re.fullmatch(r"\*For [^*]+\*", first), f"{path.name}: the first line should say whom it is for: {first}"


def test_every_link_resolves(site: Path):
    anchors = {
        path.name: {tag["id"] for tag in parsed(site, path.name).find_all(id=True)} for path in site.glob("*.html")
    }
    broken = []
    for name in anchors:
        for link in parsed(site, name).select("main a[href]"):
            href = link["href"]
            if re.match(r"[a-z]+:", href):
                continue  # another host
            target, _, fragment = href.partition("#")
            fragment = unquote(fragment)  # a heading in Chinese is linked percent-encoded, as a browser sends it
            target_path = (site / target).resolve() if target else site / name
            if not target_path.exists():
                broken.append(f"{name}: {href} (no such file)")
            elif fragment and target_path.suffix == ".html" and fragment not in anchors.get(target_path.name, set()):
                broken.append(f"{name}: {href} (no such heading)")
    assert not broken, "\n".join(broken)


def commands() -> list[tuple[str, str]]:
    """``(file name, command)`` for each line of a shell block and each code span of the pages."""
    found = []
    for path in MARKDOWN_FILES:
        text = path.read_text()
        for language, block in FENCED_BLOCK.findall(text):
            if language in ("bash", "sh"):
                found += [(path.name, line.split(" #")[0].strip()) for line in block.splitlines() if line.strip()]
        found += [(path.name, span.replace("\\|", "|")) for span in INLINE_CODE.findall(FENCED_BLOCK.sub("", text))]
    return [(name, part.strip()) for name, command in found for part in command.split("&&") if part.strip()]


def parser_options(paths: list[Path]) -> dict[str | None, set[str]]:
    """The options an argparse command line defines, by subcommand (``None``: the top level), read from its code."""
    options: dict[str | None, set[str]] = {None: set()}
    for path in paths:
        nodes = sorted(
            ast.walk(ast.parse(path.read_text())), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))
        )
        owners: dict[str, str] = {}  # variable -> the subcommand whose parser it holds now (read in source order)
        for node in nodes:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and added_parser(node.value):
                owners.update({t.id: added_parser(node.value) for t in node.targets if isinstance(t, ast.Name)})
            elif isinstance(node, ast.Call) and added_parser(node):
                options.setdefault(added_parser(node), set())
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
                receiver = node.func.value
                subcommand = added_parser(receiver) if isinstance(receiver, ast.Call) else None
                if isinstance(receiver, ast.Name):
                    subcommand = owners.get(receiver.id)
                names = {a.value for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("--")}
                options.setdefault(subcommand, set()).update(names)
    return options


def added_parser(call: ast.Call) -> str | None:
    """The subcommand a ``subparsers.add_parser("name", ...)`` call adds, else None."""
    if getattr(call.func, "attr", None) == "add_parser" and call.args and isinstance(call.args[0], ast.Constant):
        return call.args[0].value
    return None


def module_files(module: str) -> list[Path]:
    spec = importlib.util.find_spec(module)
    assert spec and spec.origin, f"no module {module}"
    origin = Path(spec.origin)
    if origin.name != "__init__.py":
        return [origin]
    # a package's own modules, and its LMS formats (autograder/lms/: each adds its options to export)
    return sorted(origin.parent.glob("*.py")) + sorted(origin.parent.glob("lms/*.py"))


def check_options(where: str, options: dict[str | None, set[str]], words: list[str]) -> list[str]:
    """What is wrong with ``words`` (a subcommand, then options) for a command line that defines ``options``."""
    subcommands = [name for name in options if name]
    subcommand = None
    if subcommands and words and not words[0].startswith("-"):
        subcommand = words[0]
        if subcommand not in subcommands:
            return [f"{where}: no subcommand {subcommand!r} (known: {subcommands})"]
    known = options[None] | options.get(subcommand, set()) | {"--help"}
    return [
        f"{where}: no option {word.split('=')[0]}"
        for word in words
        if word.startswith("--") and word.split("=")[0] not in known and not SETTING.match(word)
    ]


def test_every_documented_command_exists():
    targets = set(MAKE_TARGET.findall((REPO_ROOT / "Makefile").read_text()))
    grader = parser_options(module_files("autograder"))
    problems, checked = [], 0
    for page, command in commands():
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        words = words[1:] if words[:1] == ["sudo"] else words
        where = f"{page}: `{command}`"
        if words[:1] == ["make"] and len(words) > 1:
            target = next((w for w in words[1:] if "=" not in w), None)
            if target and target not in targets:
                problems.append(f"{where}: no make target {target}")
            checked += 1
        elif words and words[0].endswith("python") and words[1:2] == ["-m"] and len(words) > 2:
            files = module_files(words[2])
            problems += check_options(where, parser_options(files), words[3:])
            checked += 1
        elif words and words[0].endswith("python") and len(words) > 1 and words[1].endswith(".py"):
            script = REPO_ROOT / words[1]
            assert script.is_file(), f"{where}: no such script"
            problems += check_options(where, parser_options([script]), words[2:])
            checked += 1
        elif len(words) > 1 and words[0] in grader and words[0] and words[1].startswith("--"):
            problems += check_options(where, grader, words)  # `grade --jobs 2`, as prose names a step
            checked += 1
    assert not problems, "\n".join(problems)
    assert checked > 50, f"only {checked} commands found: is the pattern still right?"
