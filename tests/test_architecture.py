"""Structural rules: no import cycles between simstudy's modules, no long functions, one engine."""
import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "simstudy"
#: Functions allowed over 80 lines, each with the reason written in its own docstring.
LONG_FUNCTIONS = {"_grow_nodes"}   # the CART growth loop, its split search written out (see its docstring)


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        out[name[: -len(".__init__")] if name.endswith(".__init__") else name] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Modules of the package imported at module level by ``name``."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(parts[: len(parts) - node.level + 1] + [node.module])
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        found |= {t for t in targets if t in known and t != name}
    return found


def test_the_import_graph_has_no_cycles():
    modules = _modules()
    graph = {m: _imports(m, p, set(modules)) for m, p in modules.items()}
    state: dict[str, int] = {}

    def visit(module, path):
        state[module] = 1
        for nxt in graph[module]:
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                parent_child = all(b.startswith(a + ".") or a.startswith(b + ".") for a, b in zip(cycle, cycle[1:]))
                assert parent_child, "import cycle: " + " -> ".join(cycle)
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[module] = 2

    for module in graph:
        if module not in state:
            visit(module, [module])


def _code_lines(node: ast.FunctionDef) -> int:
    """Lines of a function from its first statement after the docstring to its end."""
    body = node.body[1:] if ast.get_docstring(node) is not None and len(node.body) > 1 else node.body
    return node.end_lineno - body[0].lineno + 1


def test_no_function_over_80_lines_without_a_reason():
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _code_lines(node) > 80:
                if node.name not in LONG_FUNCTIONS:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({_code_lines(node)} lines)")
    assert not long, "functions over 80 lines (without the docstring): " + ", ".join(long)


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
