"""The shape of recon's imports: no cycle anywhere, and reports never import the run's code."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import recon

PACKAGE = Path(recon.__file__).parent
# The night's shell: reports may use the core's declarations (the kinds of finding) and the
# decision's data types, never the code that runs a night.
RUN_CODE = ("recon.night",)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> Iterator[str]:
    """recon modules that ``path`` imports, at any depth of the file (lazy imports included)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # "from recon import frames" names a module; "from recon.x import f" names a function.
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        yield from (name for name in names if name in modules)


def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports."""
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {name: set(_imports(path, modules)) - {name} for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle_of_three() -> None:
    """The check itself can fail: a → b → c → a is reported."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_of_recon_imports_itself_through_others() -> None:
    """No import cycle anywhere in recon/ (lazy imports inside functions count too)."""
    assert find_cycle(import_graph()) is None


def test_reports_import_nothing_from_the_run() -> None:
    """recon.report depends on the core's declarations and data types, never on recon.night."""
    graph = import_graph()
    leaks = {
        (module, imported)
        for module, imports in graph.items()
        if module.startswith("recon.report")
        for imported in imports
        if imported.startswith(RUN_CODE)
    }
    assert leaks == set()


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph folded onto recon's packages (recon.store, recon.report, …); a top-level
    module such as recon.money stays a node of its own."""

    def package(module: str) -> str:
        parts = module.split(".")
        return ".".join(parts[:2])

    folded: dict[str, set[str]] = {}
    for module, imports in graph.items():
        folded.setdefault(package(module), set()).update(package(name) for name in imports)
    return {name: imports - {name} for name, imports in folded.items()}


def test_the_package_graph_folds_modules_onto_their_packages() -> None:
    """Two modules of different packages importing each other's package make a package cycle."""
    graph = {"recon.a.x": {"recon.b.y"}, "recon.b.y": set(), "recon.b.z": {"recon.a.w"}}
    assert find_cycle(package_graph(graph)) == ["recon.a", "recon.b", "recon.a"]


def test_no_package_of_recon_imports_itself_through_others() -> None:
    """No cycle between recon's packages either: store, ingest, reconcile, report, … form layers."""
    assert find_cycle(package_graph(import_graph())) is None


# The pure core: plain data in, plain data out. It imports none of the layers around it (the
# night's shell, the store, the provider, settings, reports, the entry points).
CORE = "recon.reconcile"
OUTER = (
    "recon.words",  # the words people read are rendered at the edge, from facts
    "recon.night",
    "recon.store",
    "recon.provider",
    "recon.settings",
    "recon.report",
    "recon.ingest",
    "recon.ops",
    "recon.cli",
    "recon.demo",
    "recon.sandbox",
)


def test_the_core_imports_nothing_from_the_layers_around_it() -> None:
    """recon.reconcile is the pure core: the shell imports it, never the other way round."""
    graph = import_graph()
    leaks = {
        (module, imported)
        for module, imports in graph.items()
        if module == CORE or module.startswith(f"{CORE}.")
        for imported in imports
        if imported.startswith(OUTER)
    }
    assert leaks == set()
