"""The static half of the tamper defence: name what in a student's code could fool the kernel run.

The kernel run that nbgrader does executes the hidden tests in the student's own kernel,
after the student's top-level code: a patched ``torch.allclose`` or an IPython input
transformer that drops ``assert`` lines passes every test there. The clean re-run
(:mod:`autograder.pipeline.job.clean_rerun`) is what takes such points back; this scan only
reads the code (``ast``, nothing runs) and names the suspicious constructs, so that the
instructor sees why a submission was flagged and why its two runs differ.
"""

import ast

from nbformat import NotebookNode

from autograder.course.notebook_code import bound_names, dotted_name, notebook_bindings, without_magics
from autograder.course.notebooks import grade_id, is_graded_test_cell
from tfcourse.hosted import edition_neutral

PATCHABLE_MODULES = {"torch", "numpy", "np", "F", "nn", "functional", "builtins", "__builtins__", "IPython",
                     "math", "tfcourse", "checks", "sys", "os", "unittest", "random", "pytest"}
IPYTHON_INTERNALS = {"input_transformers_cleanup", "input_transformers_post", "ast_transformers",
                     "register_magic_function", "events", "run_cell", "set_custom_exc",
                     "showtraceback"}
GRADER_WORDS = ("solutions", "gradebook", "autograded", "submitted", "grading", "nbgrader", ".ipynb",
                "hidden tests", "begin hidden", "/work/")
NETWORK_MODULES = {"socket", "urllib", "http", "requests", "httpx", "ftplib", "smtplib", "aiohttp", "zmq",
                   "websocket", "paramiko"}
ESCAPE_CALLS = {"os._exit", "sys.exit", "os.kill", "os.killpg", "os.fork", "os.system", "os.popen",
                "os.remove", "os.unlink", "shutil.rmtree", "signal.signal", "signal.alarm", "os.walk",
                "os.listdir", "os.scandir", "glob.glob", "exec", "eval", "compile", "__import__",
                "importlib.import_module", "importlib.reload", "gc.get_objects",
                "gc.get_referrers", "globals", "vars"}
ESCAPE_MODULES = {"subprocess", "ctypes", "multiprocessing", "sqlite3", "shutil", "unittest.mock", "mock",
                  "inspect", "gc", "threading", "signal", "pty"}
DEFINITION_NODES = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


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

    Skipped: cells identical to a cell of ``source`` (the setup cell of any edition, which names its own), and
    the test cells (by grade id), whose text nbgrader and the clean re-run replace with the source's anyway.
    """
    original = {edition_neutral(cell.source) for cell in source.cells if cell.cell_type == "code"}
    tests = {grade_id(cell) for cell in source.cells if is_graded_test_cell(cell)}
    protected = notebook_bindings(source)
    findings = []
    for index, cell in enumerate(student.cells):
        if cell.cell_type != "code" or edition_neutral(cell.source) in original:
            continue
        if grade_id(cell) and grade_id(cell) in tests:
            continue
        where = grade_id(cell) or f"cell {index}"
        findings.extend(f"{where}, {finding}" for finding in scan_source(cell.source, protected))
    return findings
