"""The message catalogs: which English sentences the course prints or draws, and their ``.po`` files.

A message is a string literal the code hands to the reader's language (:func:`tfcourse.messages.tr`):

- the first argument of ``tr(...)`` and of ``passed(...)`` (``print(passed("shapes"))`` ends a test cell);
- the name (first argument) and ``hint=`` of a visible-test check (``check_shape``, ``check_close``, ...),
  which the checks translate themselves;
- a figure title or axis label given to :mod:`tfcourse`'s figures (``attention_heatmap(..., title=)``,
  ``mask_image(mask, title)``, ``plot_losses(title=, xlabel=, ylabel=)``) or a training bar's ``desc=``,
  the English defaults of those parameters in :mod:`tfcourse`, the text of a box of the architecture
  diagram (``Block(kind, text)``, which :mod:`tfcourse.architecture` translates as it draws), and the name
  of an AG News artefact (``CleaningExample(artefact, raw, cleaned)``, which 06 shows with ``tr(artefact)``).

The ids are read from the student release of each notebook (``notebooks/``: what students run; the
hidden tests and the reference answers are not in it, so the shipped catalog names neither) and from
:mod:`tfcourse`'s modules. Each goes to one ``.po`` file, ``tfcourse/locale/<language>/<name>.po``,
which :func:`update` brings up to date with Babel (new ids added untranslated, a changed id marked
fuzzy, removed ones dropped).
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po
from IPython.core.inputtransformer2 import TransformerManager

from autograder.course import hidden_messages
from autograder.course.notebooks import HIDDEN_TESTS
from autograder.course.settings import REPO_ROOT, assignment_ids, release_notebook, source_notebook
from autograder.pipeline import feedback_text
from autograder.pipeline.exchange import handins
from tfcourse.messages import LOCALE

PACKAGE = REPO_ROOT / "tfcourse"
PACKAGE_CATALOG = "tfcourse"
CHECKS = hidden_messages.CHECKS  # the visible tests call the same checks
# Callable name -> (positional indexes, keyword names) whose string literal is a message.
MESSAGE_ARGUMENTS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "tr": ((0,), ()),
    "passed": ((0,), ()),
    **{check: ((0,), ("name", "hint")) for check in CHECKS},
    "attention_heatmap": ((3,), ("title",)),
    "mask_image": ((1,), ("title",)),
    "plot_losses": ((1, 2, 3), ("title", "xlabel", "ylabel")),
    "train": ((), ("desc",)),
    "Block": ((1,), ()),  # tfcourse/architecture.py: a box of the diagram and its text
    "CleaningExample": ((0,), ("artefact",)),  # tfcourse/agnews.py: an artefact's name, which 06's table shows
}
DEFAULTED_PARAMETERS = {"title", "xlabel", "ylabel", "desc"}  # in tfcourse: their English defaults are messages


def _literal(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value else None


def messages_in(code: str) -> Iterator[tuple[str, int]]:
    """``(message, line)`` for every message literal in ``code`` (Python; IPython magics allowed)."""
    tree = ast.parse(TransformerManager().transform_cell(code))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and hidden_messages.called_name(node) in MESSAGE_ARGUMENTS:
            positions, keywords = MESSAGE_ARGUMENTS[hidden_messages.called_name(node)]
            given = [node.args[i] for i in positions if i < len(node.args)]
            given += [k.value for k in node.keywords if k.arg in keywords]
            for argument in given:
                if (text := _literal(argument)) is not None:
                    yield text, argument.lineno


def package_defaults(code: str) -> Iterator[tuple[str, int]]:
    """The English defaults of :data:`DEFAULTED_PARAMETERS` in the functions of a :mod:`tfcourse` module."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.FunctionDef):
            arguments = node.args.args + node.args.kwonlyargs
            defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + node.args.defaults
            defaults += node.args.kw_defaults
            for argument, default in zip(arguments, defaults, strict=True):
                if argument.arg in DEFAULTED_PARAMETERS and (text := _literal(default)) is not None:
                    yield text, default.lineno


Places = list[tuple[str, int | None]]


def notebook_messages(assignment: str, root: Path = REPO_ROOT) -> dict[str, Places]:
    """Message -> the cells (``<notebook>.ipynb#<cell id>``) of the student release that use it, in order."""
    found: dict[str, Places] = {}
    for cell in nbformat.read(release_notebook(assignment, root), as_version=4).cells:
        if cell.cell_type == "code":
            for text, _line in messages_in(cell.source):
                found.setdefault(text, []).append((f"{assignment}.ipynb#{cell.id}", None))
    return found


def package_messages(package: Path = PACKAGE) -> dict[str, Places]:
    """Message -> the places (module, line) of :mod:`tfcourse` that use it."""
    found: dict[str, Places] = {}
    for module in sorted(package.glob("*.py")):
        code = module.read_text(encoding="utf-8")
        for text, line in [*messages_in(code), *package_defaults(code)]:
            found.setdefault(text, []).append((f"tfcourse/{module.name}", line))
    return found


def hidden_messages_of(assignment: str, root: Path = REPO_ROOT) -> dict[str, Places]:
    """Message -> the cells of the source notebook whose hidden tests use it
    (:func:`autograder.course.hidden_messages.message_literals`)."""
    found: dict[str, Places] = {}
    for cell in nbformat.read(source_notebook(assignment, root), as_version=4).cells:
        for block in HIDDEN_TESTS.findall(cell.source) if cell.cell_type == "code" else []:
            for literal in hidden_messages.message_literals(block):
                found.setdefault(literal.text, []).append((f"{assignment}.ipynb#{cell.id}", None))
    return found


def sources(root: Path = REPO_ROOT) -> dict[str, dict[str, Places]]:
    """Catalog name -> its messages: one per notebook, and ``tfcourse`` for the package."""
    catalogs = {assignment: notebook_messages(assignment, root) for assignment in assignment_ids(root)}
    catalogs[PACKAGE_CATALOG] = package_messages(root / "tfcourse")
    return catalogs


def hidden_sources(root: Path = REPO_ROOT) -> dict[str, dict[str, Places]]:
    """Catalog name (the notebook's) -> the messages of its hidden tests, for the grader's catalogs
    (``autograder/locale/``, which students never get)."""
    return {assignment: hidden_messages_of(assignment, root) for assignment in assignment_ids(root)}


def strings(value: object) -> list[str]:
    """Every string of a table of words, in order (nested dictionaries and tuples included)."""
    if isinstance(value, str):
        return [value]
    return [text for item in (value.values() if isinstance(value, dict) else value) for text in strings(item)]


def constants(path: Path, names: set[str]) -> list[str]:
    """The strings of the module-level constants ``names`` of a module, read as text (the hub's modules are on a
    floor above this package's)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assigned = [node for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)]
    return [text for node in assigned if node.targets[0].id in names for text in strings(ast.literal_eval(node.value))]


def interface_sources(root: Path = REPO_ROOT) -> dict[tuple[Path, str], dict[str, Places]]:
    """(catalog folder, name) -> the English the grader's feedback page and the hub say: their catalogs are
    ``autograder/pipeline/locale/<language>/feedback.po`` and ``classroom/locale/<language>/hub.po``."""
    hub, submit = root / "classroom", {"REASONS", "MESSAGE_DISK_FULL", "MESSAGE_NOT_CONFIRMED", "MESSAGE"}
    said = [*constants(hub / "student_view.py", {"MESSAGES"}), *constants(hub / "student_submit.py", submit),
            *constants(hub / "oom_notice.py", {"NOTICE"}), *strings(handins.KINDS), handins.kind_of(0)]
    words = {(feedback_text.LOCALE, "feedback"): strings(feedback_text.ENGLISH_WORDS), (hub / "locale", "hub"): said}
    return {place: {text: [] for text in texts} for place, texts in words.items()}


def catalog_file(language: str, name: str, locale: Path = LOCALE) -> Path:
    return locale / language / f"{name}.po"


def read_catalog(language: str, name: str, locale: Path = LOCALE) -> Catalog:
    path = catalog_file(language, name, locale)
    if not path.exists():
        return Catalog(locale=language, project="Transformers from scratch", domain=name)
    with path.open("rb") as file:
        return read_po(file, locale=language, domain=name)


def update(language: str, name: str, messages: dict[str, Places], locale: Path = LOCALE) -> Catalog:
    """Bring the ``.po`` file of ``name`` in line with ``messages`` and write it; return the catalog."""
    template = Catalog(project="Transformers from scratch", domain=name)
    for text, places in messages.items():
        template.add(text, locations=places)
    catalog = read_catalog(language, name, locale)
    catalog.update(template, update_header_comment=False)
    path = catalog_file(language, name, locale)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        write_po(file, catalog, width=120, ignore_obsolete=True, omit_header=True)
    return catalog


def untranslated(catalog: Catalog) -> list[str]:
    """The ids of ``catalog`` with no translation, or only a fuzzy one."""
    return [message.id for message in catalog if message.id and (not message.string or message.fuzzy)]
