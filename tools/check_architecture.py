"""Checks the house rules of docs/ARCHITECTURE.md on the source tree; CI runs it.

1. No module of the product (``calib/``, ``dashboard/``, ``app.py``, ``pages/``) over
   :data:`MAX_MODULE_LINES` lines.
2. No function over :data:`MAX_FUNCTION_LINES` lines unless a reason is written at its
   top: a comment ``# long: <why>`` within the first lines of its body.
3. No import cycle among the product's modules (imports inside functions count; imports
   under ``if TYPE_CHECKING:`` do not, they never run).
4. Streamlit is imported only by ``dashboard/``, ``app.py`` and ``pages/``.
5. The rooms import only what they may (:data:`FORBIDDEN`): the engine never imports the
   faces (presentation, hosting, CLI, dashboard), presentation never imports hosting or the
   CLI, nothing in ``calib/`` imports the dashboard.
6. A face (:data:`FACE_ROOMS`: the CLI, the notebook API, the dashboard, its pages and
   ``app.py``) calls ``calib.runs`` and ``calib.present``, never the engine below them
   (:data:`ENGINE_ROOMS`); an import under ``if TYPE_CHECKING:`` (a type for an annotation)
   never runs and is allowed. No face is exempt.

Usage: ``python tools/check_architecture.py [ROOT]``; prints one line per breach and exits
1 when there is any, else prints a summary and exits 0.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 80
#: A function over the limit states why within this many lines after its signature.
REASON_WINDOW = 6
REASON_MARK = "# long:"
STREAMLIT_ROOMS = ("dashboard", "app", "pages", "ui")
#: (importer prefix, imported prefix, why) pairs that must not occur. A prefix matches a
#: module name equal to it or starting with it followed by a dot.
FACES = ("calib.present", "calib.hosting", "calib.cli", "calib.__main__")
FORBIDDEN: tuple[tuple[str, str, str], ...] = (
    ("calib", "dashboard", "the library never imports the dashboard"),
    ("calib", "ui", "the library never imports the dashboard"),
    ("calib.present", "calib.hosting", "presentation does not depend on hosting"),
    ("calib.present", "calib.cli", "presentation does not depend on the CLI"),
    ("calib.hosting", "calib.cli", "hosting does not depend on the CLI"),
)

#: The faces of issue 23: they read calib.runs (and calib.present), nothing below them.
FACE_ROOMS: tuple[str, ...] = ("calib.cli", "calib.api", "calib.present.notebook", "dashboard", "pages", "app")
#: The engine below calib.runs. Foundations (errors, settings, numbers, scale, verbal, rows...)
#: and input (loading, readers, dataset, table, limits, options, clusters) stay open to
#: the faces: they load what the user gives and name its parts.
ENGINE_ROOMS: tuple[str, ...] = (
    "calib.metrics", "calib.bootstrap", "calib.curves", "calib.maps", "calib.routing", "calib.thresholds",
    "calib.audit", "calib.verdict", "calib.compare", "calib.decision", "calib.drift", "calib.labels",
    "calib.traffic", "calib.writeback", "calib.isotonic", "calib.logistic", "calib.solvers", "calib.covariate",
    "calib.failure",
)

#: Every other top-level part of calib: foundations, input, the use cases, presentation,
#: hosting and the faces. A new top-level module must join one of these or the engine, or
#: the face rule could not see it (a new engine module faces imported went unnoticed once).
OPEN_ROOMS: tuple[str, ...] = (
    "calib.errors", "calib.settings", "calib.numbers", "calib.estimates", "calib.wording", "calib.scale", "calib.verbal",
    "calib.rows", "calib.loadreport", "calib.readers", "calib.loading", "calib.options", "calib.limits",
    "calib.clusters", "calib.table", "calib.dataset", "calib.runs", "calib.present",
    "calib.hosting", "calib.cli", "calib.api", "calib.__main__",
)


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    tree: ast.Module
    lines: int


def _module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def product_files(root: Path) -> list[Path]:
    # ui.py: the dashboard's module before it became the dashboard/ package
    files = [root / f for f in ("app.py", "ui.py") if (root / f).exists()]
    for folder in ("calib", "dashboard", "pages"):
        files += sorted((root / folder).rglob("*.py")) if (root / folder).is_dir() else []
    return [f for f in files if "__pycache__" not in f.parts]


def read_modules(root: Path) -> list[Module]:
    out = []
    for path in product_files(root):
        text = path.read_text(encoding="utf-8")
        out.append(Module(_module_name(root, path), path, ast.parse(text, str(path)), text.count("\n") + 1))
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for orelse in child.orelse:
                    visit(orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child)

    visit(tree)
    return found


def _resolve_relative(mod: Module, node: ast.ImportFrom) -> str:
    # the package a relative import starts from: the module's own for an __init__
    package = mod.name.split(".") if mod.path.name == "__init__.py" else mod.name.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(mod: Module, known: set[str]) -> list[tuple[str, int]]:
    """(module name, line) of every product module ``mod`` imports."""
    out = []
    for node in _import_nodes(mod.tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = _resolve_relative(mod, node) if node.level else (node.module or "")
            # ``from pkg import sub`` imports the submodule when there is one
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for t in targets:
            out.append((t, node.lineno))
    return out


def _closest_known(name: str, known: set[str]) -> str | None:
    parts = name.split(".")
    while parts:
        cand = ".".join(parts)
        if cand in known:
            return cand
        parts.pop()
    return None


def _matches(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def check_sizes(mods: list[Module], root: Path) -> list[str]:
    errors = []
    for mod in mods:
        rel = mod.path.relative_to(root)
        if mod.lines > MAX_MODULE_LINES:
            errors.append(f"{rel}: {mod.lines} lines (limit {MAX_MODULE_LINES}): split it")
        source = mod.path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(mod.tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length <= MAX_FUNCTION_LINES:
                continue
            # from the signature to a few lines into the body (a comment is no statement:
            # it sits before the body's first one)
            window = source[node.lineno: node.body[0].lineno - 1 + REASON_WINDOW]
            if not any(REASON_MARK in line for line in window):
                errors.append(f"{rel}:{node.lineno}: function {node.name} is {length} lines "
                              f"(limit {MAX_FUNCTION_LINES}) with no '{REASON_MARK} <why>' at its top")
    return errors


def check_imports(mods: list[Module], root: Path) -> tuple[list[str], dict[str, set[str]]]:
    known = {m.name for m in mods}
    graph: dict[str, set[str]] = {m.name: set() for m in mods}
    errors = []
    for mod in mods:
        rel = mod.path.relative_to(root)
        room = mod.name.split(".")[0]
        for name, line in imported_names(mod, known):
            if _matches(name, "streamlit") and room not in STREAMLIT_ROOMS:
                errors.append(f"{rel}:{line}: imports Streamlit; only dashboard/, app.py and pages/ may")
            target = _closest_known(name, known)
            if target is None or target == mod.name:
                continue
            graph[mod.name].add(target)
            for importer, imported, why in FORBIDDEN:
                if _matches(mod.name, importer) and _matches(target, imported):
                    errors.append(f"{rel}:{line}: imports {target}: {why}")
            engine = _matches(mod.name, "calib") and not any(_matches(mod.name, f) for f in FACES)
            if engine and any(_matches(target, f) for f in FACES):
                errors.append(f"{rel}:{line}: the engine module {mod.name} imports the face {target}")
    return errors + check_faces(mods, root, known), graph


def check_faces(mods: list[Module], root: Path, known: set[str]) -> list[str]:
    """Rule 6: a face imports no engine module (outside ``if TYPE_CHECKING:``); every
    top-level part of calib is in the engine or in :data:`OPEN_ROOMS`."""
    errors = []
    for mod in mods:
        top = ".".join(mod.name.split(".")[:2])
        if mod.name.startswith("calib.") and not any(_matches(top, r) for r in ENGINE_ROOMS + OPEN_ROOMS):
            errors.append(f"{mod.path.relative_to(root)}: {top} is in no room: add it to ENGINE_ROOMS or "
                          "OPEN_ROOMS (tools/check_architecture.py) and to docs/ARCHITECTURE.md")
        if not any(_matches(mod.name, f) for f in FACE_ROOMS):
            continue
        rel = mod.path.relative_to(root)
        below = [(t, line) for name, line in imported_names(mod, known)
                 if (t := _closest_known(name, known)) is not None and any(_matches(t, e) for e in ENGINE_ROOMS)]
        for t, line in below:
            errors.append(f"{rel}:{line}: the face {mod.name} imports the engine module {t}: call calib.runs "
                          "(or calib.present) instead")
    return errors


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), or a self-loop."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return cycles


def main(argv: list[str]) -> int:
    root = Path(argv[1]).resolve() if len(argv) > 1 else Path(__file__).resolve().parents[1]
    mods = read_modules(root)
    errors = check_sizes(mods, root)
    import_errors, graph = check_imports(mods, root)
    errors += import_errors
    for comp in find_cycles(graph):
        errors.append(f"import cycle: {' <-> '.join(comp)}")
    for e in errors:
        print(e)
    if errors:
        print(f"check_architecture: {len(errors)} breach(es) in {len(mods)} modules")
        return 1
    print(f"check_architecture: {len(mods)} modules, sizes, imports and cycles OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
