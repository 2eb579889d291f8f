"""Structural rules: the layer contracts (import-linter: every import counts, those inside
functions too, and no cycle anywhere), small modules and functions, one engine.

Why import-linter rather than a parser of our own: its graph (grimp) counts every import
statement of a module, inside functions as well, and its contracts say in pyproject.toml, in
one place, which layer may import which; a broken contract names the offending import chain.
"""
import ast
import os
import shutil
import subprocess
import sys

from conftest import ROOT

PACKAGE = ROOT / "simstudy"

#: Functions allowed over 60 lines of code, each a compiled kernel whose loop is written out (the
#: reason in its docstring).
LONG_FUNCTIONS = {"_grow_nodes"}   # the CART growth loop, its split search inlined for speed
#: Modules allowed over 400 lines: compiled kernels kept in one file (numba's cache of a kernel
#: follows its own file).
LONG_MODULES = {"learners/cart/grow.py", "learners/logistic/newton.py"}


def test_the_import_contracts_hold():
    """The contracts of ``[tool.importlinter]`` in pyproject.toml: each layer imports only the
    layers below it, no import cycle between the modules or packages of any folder, inference
    pure, and processes started only in ``simstudy.engine.backends``."""
    proc = _lint_imports(ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "BROKEN" not in proc.stdout and proc.stdout.count("KEPT") >= 5, proc.stdout[-2000:]


def _lint_imports(root) -> subprocess.CompletedProcess:
    """import-linter's verdict on the package below ``root`` (its own pyproject.toml), uncached."""
    code = ("from importlinter.cli import lint_imports; "
            f"raise SystemExit(lint_imports(config_filename={str(root / 'pyproject.toml')!r}, no_cache=True, "
            "no_logo=True))")
    return subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root)})


def test_a_planted_cycle_breaks_the_contracts(tmp_path):
    """The contracts see an import hidden inside a function: a copy of the package with one such
    import planted (inference.results -> inference.pivot, which imports results at the top) fails
    the acyclic contract and names the cycle."""
    shutil.copytree(PACKAGE, tmp_path / "simstudy", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    planted = tmp_path / "simstudy" / "inference" / "results.py"
    planted.write_text(planted.read_text() + "\n\ndef _planted():\n    from simstudy.inference import pivot\n\n"
                       "    return pivot\n")
    proc = _lint_imports(tmp_path)
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "No import cycle between the modules or packages of any folder BROKEN" in proc.stdout, proc.stdout[-2000:]
    assert ".pivot -> .results" in proc.stdout or ".results -> .pivot" in proc.stdout, proc.stdout[-2000:]


def _code_lines(node: ast.FunctionDef) -> int:
    """Lines of a function from its first statement after the docstring to its end."""
    body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
    return node.end_lineno - body[0].lineno + 1


def test_no_function_over_60_lines_without_a_reason():
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _code_lines(node) > 60:
                if node.name not in LONG_FUNCTIONS:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({_code_lines(node)} lines)")
    assert not long, "functions over 60 lines (without the docstring): " + ", ".join(long)


def test_no_module_over_400_lines_but_the_compiled_kernels():
    long = [f"{path.relative_to(PACKAGE)} ({n} lines)" for path in sorted(PACKAGE.rglob("*.py"))
            if (n := len(path.read_text().splitlines())) > 400 and path.relative_to(PACKAGE).as_posix() not in LONG_MODULES]
    assert not long, "modules over 400 lines: " + ", ".join(long)


def _code_words(tree: ast.AST) -> set[str]:
    """Identifiers, attribute names and string constants of a module, docstrings left out."""
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                  and ast.get_docstring(n) is not None}
    words = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            words.add(node.id)
        elif isinstance(node, ast.Attribute):
            words.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.add(node.value)
    return words


def test_the_engine_knows_no_study():
    """Study names and study columns live in the study folders and the registry, not in the engine,
    the results and sweeps modules or the command lines (``--help`` quotes example commands and the
    audit runs the rho_hat study by design: those two are left out)."""
    paths = [*sorted((PACKAGE / "engine").rglob("*.py")), PACKAGE / "results.py", PACKAGE / "sweeps.py",
             *sorted(p for p in (PACKAGE / "cli").rglob("*.py") if p.name not in ("help.py", "audit.py"))]
    for path in paths:
        words = _code_words(ast.parse(path.read_text()))
        for word in ("cv_variance", "cv_clt", "nedelko", "table2", "rho_hat", "sample_size", "bayes_error"):
            assert not any(word in w for w in words), f"{path.relative_to(ROOT)}'s code mentions {word!r}"
