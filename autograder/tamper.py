"""Tamper defence: a static scan of the student's code and a clean re-run of the graded tests.

The kernel run that nbgrader does executes the hidden tests in the student's own kernel,
after the student's top-level code: a patched ``torch.allclose`` or an IPython input
transformer that drops ``assert`` lines passes every test there. The clean re-run executes
the *source* notebook in a fresh process (a zygote child that has only imported the
notebook's modules, sandboxed like the kernel and without network), with each answer cell
replaced by only the imports, functions, classes and constant assignments of the student's
answer (:func:`extract_definitions`); top-level statements of the student never run. The static scan
(:func:`scan`) names the suspicious constructs, so the instructor sees why a run differs.
"""

import ast
import builtins
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

from nbformat import NotebookNode

from autograder.cleanrun import without_magics
from autograder.isolation import Limits
from autograder.notebooks import grade_id, is_answer_cell, is_graded_test_cell
from autograder.zygote import Zygote

PATCHABLE_MODULES = {"torch", "numpy", "np", "F", "nn", "functional", "builtins", "__builtins__", "IPython",
                     "math", "tfcourse", "checks", "sys", "os", "unittest", "random", "pytest"}  # fmt: skip
IPYTHON_INTERNALS = {"input_transformers_cleanup", "input_transformers_post", "ast_transformers",
                     "register_magic_function", "events", "run_cell", "set_custom_exc",
                     "showtraceback"}  # fmt: skip
GRADER_WORDS = ("solutions", "gradebook", "autograded", "submitted", "grading", "nbgrader", ".ipynb",
                "hidden tests", "begin hidden", "/work/")  # fmt: skip
NETWORK_MODULES = {"socket", "urllib", "http", "requests", "httpx", "ftplib", "smtplib", "aiohttp", "zmq",
                   "websocket", "paramiko"}  # fmt: skip
ESCAPE_CALLS = {"os._exit", "sys.exit", "os.kill", "os.killpg", "os.fork", "os.system", "os.popen",
                "os.remove", "os.unlink", "shutil.rmtree", "signal.signal", "signal.alarm", "os.walk",
                "os.listdir", "os.scandir", "glob.glob", "exec", "eval", "compile", "__import__",
                "importlib.import_module", "importlib.reload", "gc.get_objects",
                "gc.get_referrers", "globals", "vars"}  # fmt: skip
ESCAPE_MODULES = {"subprocess", "ctypes", "multiprocessing", "sqlite3", "shutil", "unittest.mock", "mock",
                  "inspect", "gc", "threading", "signal", "pty"}  # fmt: skip
BUILTIN_NAMES = set(dir(builtins))
DEFINITION_NODES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def dotted_name(node: ast.AST) -> str:
    """``torch.nn.functional.softmax`` for the expression of that name, '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def scan_source(source: str, protected: dict[str, str] | None = None) -> list[str]:
    """Human-readable findings for one cell's code ("line 3: patches torch.allclose").

    ``protected`` names (see :func:`notebook_bindings`) may not be rebound at top level.
    """
    try:
        tree = ast.parse(without_magics(source))
    except SyntaxError as error:
        return [f"line {error.lineno}: does not parse ({error.msg})"]
    aliases = dict.fromkeys(PATCHABLE_MODULES, "")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name
    findings: list[str] = []

    def note(node: ast.AST, text: str) -> None:
        findings.append(f"line {getattr(node, 'lineno', '?')}: {text}")

    for node in tree.body:
        if not isinstance(node, DEFINITION_NODES + (ast.Assign, ast.AnnAssign)):
            continue
        for name in sorted(bound_names(node) & set(protected or {})):
            if (protected or {})[name] != ast.unparse(node):
                note(node, f"rebinds {name}, which the notebook defines")
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            name = dotted_name(target)
            if isinstance(target, ast.Attribute) and name.split(".")[0] in aliases:
                note(node, f"patches {name}")
            if isinstance(target, ast.Name) and target.id in {"__builtins__", "assert_", "print"}:
                note(node, f"rebinds {target.id}")
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for module in modules:
                root = module.split(".")[0]
                if root in NETWORK_MODULES:
                    note(node, f"network use (imports {module})")
                elif module in ESCAPE_MODULES or root in ESCAPE_MODULES:
                    note(node, f"imports {module}")
                elif root == "builtins":
                    note(node, "imports builtins")
        if isinstance(node, ast.Call):
            name = dotted_name(node.func)
            if name in {"setattr", "delattr"} and node.args and dotted_name(node.args[0]).split(".")[0] in aliases:
                note(node, f"patches {dotted_name(node.args[0])} with {name}")
            if name in ESCAPE_CALLS:
                note(node, f"calls {name}")
            if name == "get_ipython" or name.endswith(".get_ipython"):
                note(node, "uses get_ipython()")
            if name in {"open", "io.open"} or name.endswith((".read_text", ".read_bytes", ".open")):
                note(node, f"reads or writes a file ({name})")
        if isinstance(node, ast.Attribute) and dotted_name(node) == "sys.modules":
            note(node, "touches sys.modules")
        if isinstance(node, ast.Attribute) and node.attr in IPYTHON_INTERNALS:
            note(node, f"touches IPython internals ({node.attr})")
        if isinstance(node, ast.Attribute) and node.attr in {
            "__file__",
            "__globals__",
            "__code__",
            "f_back",
            "f_globals",
        }:
            note(node, f"inspects {node.attr}")
        if isinstance(node, ast.ClassDef) and any(dotted_name(b).endswith("NodeTransformer") for b in node.bases):
            note(node, "defines an AST transformer")
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            lowered = node.value.lower()
            if any(word in lowered for word in GRADER_WORDS):
                note(node, f"mentions grader files ({node.value[:60]!r})")
            if "assert" in lowered:
                note(node, f"handles the text 'assert' ({node.value[:60]!r})")
    return findings


def scan(student: NotebookNode, source: NotebookNode) -> list[str]:
    """Findings for the code cells of ``student`` that are not the notebook's own.

    Skipped: cells identical to a cell of ``source``, and the test cells (by grade id), whose
    text nbgrader and the clean re-run replace with the source's anyway.
    """
    original = {cell.source for cell in source.cells if cell.cell_type == "code"}
    tests = {grade_id(cell) for cell in source.cells if is_graded_test_cell(cell)}
    protected = notebook_bindings(source)
    findings = []
    for index, cell in enumerate(student.cells):
        if cell.cell_type != "code" or cell.source in original or (grade_id(cell) and grade_id(cell) in tests):
            continue
        where = grade_id(cell) or f"cell {index}"
        findings.extend(f"{where}, {finding}" for finding in scan_source(cell.source, protected))
    return findings


def is_constant_assignment(node: ast.AST) -> bool:
    """``NEG_INF = -1e9``: a plain name bound to an expression that calls nothing."""
    if not isinstance(node, ast.Assign | ast.AnnAssign) or getattr(node, "value", None) is None:
        return False
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return all(isinstance(t, ast.Name) for t in targets) and not any(
        isinstance(n, ast.Call | ast.Lambda | ast.NamedExpr) for n in ast.walk(node.value)
    )


def bound_names(node: ast.AST) -> set[str]:
    """The top-level names a definition, import or assignment binds."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {target.id for target in targets if isinstance(target, ast.Name)}


def own_statements(source: NotebookNode) -> Iterator[ast.stmt]:
    """The top-level statements of the source notebook's own (non-answer) code cells, in order."""
    for cell in source.cells:
        if cell.cell_type != "code" or is_answer_cell(cell):
            continue
        try:
            yield from ast.parse(without_magics(cell.source)).body
        except SyntaxError:
            continue


def notebook_bindings(source: NotebookNode) -> dict[str, str]:
    """``{name: the statement that binds it}`` for the source notebook's own (non-answer) code."""
    bindings: dict[str, str] = {}
    for node in own_statements(source):
        for name in bound_names(node):
            bindings[name] = ast.unparse(node) if isinstance(node, ast.Import | ast.ImportFrom) else ""
    return bindings


def extract_definitions(source: str, protected: dict[str, str] | None = None) -> str:
    """The imports, functions, classes and constant assignments of an answer cell, nothing else.

    A statement that binds a ``protected`` name (what the notebook itself defines: ``torch``,
    ``check_close``, ...) is dropped, unless it is the very import the notebook makes; builtins
    cannot be shadowed either. So a student's ``def check_close(*a): pass`` has no effect.
    """
    try:
        tree = ast.parse(without_magics(source))
    except SyntaxError:
        return ""
    protected = protected or {}
    kept = []
    for node in tree.body:
        if not (isinstance(node, DEFINITION_NODES) or is_constant_assignment(node)):
            continue
        names = bound_names(node)
        same_import = isinstance(node, ast.Import | ast.ImportFrom) and all(
            protected.get(name) == ast.unparse(node) for name in names
        )
        if names & (set(protected) | BUILTIN_NAMES) and not same_import:
            continue
        kept.append(node)
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def added_definitions(student: NotebookNode, source: NotebookNode, protected: dict[str, str]) -> dict[str, str]:
    """The definitions in the code cells the student added, by the grade id of the first graded cell below them.

    A student's scratch cell may define a helper that an answer calls; the clean re-run defines
    it too, just before that graded cell, as the kernel did. A cell whose text is one of the
    notebook's own cells is not the student's. Only definitions count (see :func:`extract_definitions`).
    """
    own = {cell.source.strip() for cell in source.cells if cell.cell_type == "code"}
    placed: dict[str, str] = {}
    pending: list[str] = []
    for cell in student.cells:
        if cell.cell_type != "code":
            continue
        if grade_id(cell):
            if pending:
                placed[grade_id(cell)] = "\n\n".join(filter(None, [placed.get(grade_id(cell)), *pending]))
                pending = []
        elif cell.source.strip() not in own:
            pending += [code for code in [extract_definitions(cell.source, protected)] if code.strip()]
    return placed


def clean_plan(student: NotebookNode, source: NotebookNode) -> list[dict]:
    """The source notebook's code cells in order, answer cells swapped for the student's definitions.

    Definitions from cells the student added go in just before the first graded cell below them.
    """
    answers: dict[str, str] = {}
    for cell in student.cells:
        if cell.cell_type == "code" and grade_id(cell) and is_answer_cell(cell):
            answers.setdefault(grade_id(cell), cell.source)
    protected = notebook_bindings(source)
    added = added_definitions(student, source, protected)
    plan = []
    for cell in source.cells:
        if cell.cell_type != "code":
            continue
        if grade_id(cell) in added:
            plan.append({"kind": "added", "grade_id": grade_id(cell), "source": added[grade_id(cell)]})
        if is_answer_cell(cell):
            code = extract_definitions(answers.get(grade_id(cell), ""), protected)
            plan.append({"kind": "answer", "grade_id": grade_id(cell), "source": code})
        elif is_graded_test_cell(cell):
            plan.append({"kind": "test", "grade_id": grade_id(cell), "source": cell.source})
        else:
            plan.append({"kind": "setup", "grade_id": grade_id(cell) or "", "source": cell.source})
    # What comes after the last test (summary figures, extensions) cannot change a result.
    last_test = max((i for i, cell in enumerate(plan) if cell["kind"] == "test"), default=-1)
    return plan[: last_test + 1]


def clean_rerun(student: NotebookNode, source: NotebookNode, limits: Limits, zygote: Zygote) -> dict[str, dict]:
    """Run the clean plan in a child of ``zygote`` under ``limits``; ``{grade_id: {"passed", "message"}}``.

    A test that has no result (the run died or timed out before it) counts as failed, and so
    does one whose result the student's code could have forged into something malformed.
    """
    plan = clean_plan(student, source)
    workdir = zygote.job_folder()
    results_path = workdir / "clean_results.json"
    try:
        outcome = zygote.run("autograder.cleanrun:run_plan", [plan, str(results_path), limits.cell_timeout],
                             limits, workdir)  # fmt: skip
        results = read_results(results_path)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    why = "timed out" if outcome.timed_out else f"ended early (exit {outcome.returncode})"
    for cell in plan:
        if cell["kind"] == "test" and cell["grade_id"] not in results:
            results[cell["grade_id"]] = {"passed": False, "message": f"the clean re-run {why}"}
    return results


def read_results(path: Path) -> dict[str, dict]:
    """The clean run's results file, keeping only well-formed entries; a link (to anywhere) is ignored."""
    try:
        if path.is_symlink():
            return {}
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        name: {"passed": entry["passed"], "message": str(entry.get("message", ""))[:2000]}
        for name, entry in data.items()
        if isinstance(entry, dict) and isinstance(entry.get("passed"), bool)
    }


def notebook_modules(source: NotebookNode) -> tuple[str, ...]:
    """The modules the notebook's own code imports, in order: what a clean-run zygote preloads."""
    modules: dict[str, None] = {}
    for node in own_statements(source):
        if isinstance(node, ast.Import):
            modules.update(dict.fromkeys(alias.name for alias in node.names))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules[node.module] = None
    return tuple(modules)
