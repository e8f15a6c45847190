"""The import graph of ``elfmem/``: no circle between modules, no import up a layer.

A newcomer reads the architecture from the folder names (docs/architecture.md); this keeps the
folders honest. The graph is read with ``ast`` from every module's source, so nothing is imported
to build it: every ``import`` and ``from ... import`` counts, at module level and inside functions
(a lazy import is still a dependency, only a later one).

Imports under ``if TYPE_CHECKING:`` count for both checks. They never run, so they cannot make
an import fail half-way, but naming a type from a layer is depending on that layer, and two
modules that name each other's types cannot be read, moved or tested apart: a type both need
belongs in a module of its own (``store/plan.py``, ``adapters/embedder.py``).

The layers are top-level names of ``elfmem``, in ``LAYERS``, bottom first. The bottom holds the
data model (``block``) and the small modules every layer uses and that import nothing above the
block layer: ``errors`` (which redacts with ``block.credentials``), ``clock``, ``encodable``,
``progress``, ``filelock``, ``lazyload``, ``config`` and ``gitprogram``. The top holds the
interfaces and ``demo``, which drives the memory only through ``MemorySystem`` as they do; a
third check keeps them off the storage layers (``store``, ``index``) altogether.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "elfmem"

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "block",
        *("errors", "clock", "encodable", "progress", "filelock", "lazyload", "config"),
        "gitprogram",
    ),
    ("store",),
    ("index",),
    ("adapters",),
    ("retrieval",),
    ("rhythms",),
    ("identity",),
    ("sharing",),
    ("care",),
    ("api", "__init__", "guide"),  # the facade; ``elfmem/__init__`` re-exports it
    ("cli", "mcp", "launch", "demo"),
)
"""Bottom first. Each entry is a top-level module or package of ``elfmem``; a module may import
its own layer and the layers before it, never one after."""

UPWARD_EXCEPTIONS: dict[tuple[str, str], str] = {}
"""(importer, imported) pairs that go up a layer today, each with the reason it is not fixed."""

INTERFACES = ("cli", "mcp", "launch", "demo")
STORAGE = ("store", "index")
"""The interfaces reach the repository and the index only through ``MemorySystem``; they may
import the result types its methods return, which live in the layers above these two."""

INTERFACE_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("elfmem.cli.reference", "elfmem.store.log"): (
        "docs/cli.md documents `log --json` with CommitInfo's fields, but MemorySystem.history "
        "declares list[dict], so the class cannot be read from the API's signature"
    ),
}
"""(importer, imported) pairs where an interface names a storage module, each with its reason."""


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int
    type_only: bool


def module_name(path: Path) -> str:
    parts = ["elfmem", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, type_only: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    """Every import statement in ``tree``, with whether it sits under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, type_only
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), True)
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), type_only)
        else:
            yield from _imports(node, type_only)


def _targets(node: ast.stmt, importer: str, is_package: bool, known: set[str]) -> Iterator[str]:
    """The ``elfmem`` modules one import statement loads, each as specific as it can be named."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        package = importer.split(".")
        package = package if is_package else package[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, *([base] if base else [])])
    for alias in node.names:
        full = f"{base}.{alias.name}"
        yield full if full in known else base


def import_graph() -> list[Edge]:
    """Every import from one ``elfmem`` module of another, as written in the source."""
    modules = all_modules()
    known = set(modules)
    edges = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text("utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node, type_only in _imports(tree):
            for target in _targets(node, name, is_package, known):
                if target.split(".")[0] == "elfmem" and target != name:
                    assert target in known, f"{name}:{node.lineno} imports unknown {target}"
                    edges.append(Edge(name, target, node.lineno, type_only))
    return edges


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


def layer_of(module: str) -> int:
    top = _top(module)
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise AssertionError(f"{module} is in no layer: add its top-level name to LAYERS")


def upward(edges: list[Edge]) -> list[str]:
    return sorted(
        f"{e.importer}:{e.line} imports {e.imported} "
        f"(layer {LAYERS[layer_of(e.imported)][0]} above {LAYERS[layer_of(e.importer)][0]})"
        for e in edges
        if layer_of(e.imported) > layer_of(e.importer)
        and (e.importer, e.imported) not in UPWARD_EXCEPTIONS
    )


def circles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.importer, set()).add(e.imported)
        graph.setdefault(e.imported, set())
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return sorted(found)


@pytest.fixture(scope="module")
def edges() -> list[Edge]:
    return import_graph()


def test_every_module_has_a_layer(edges: list[Edge]) -> None:
    for module in all_modules():
        layer_of(module)


def test_no_module_imports_a_layer_above_its_own(edges: list[Edge]) -> None:
    found = upward(edges)
    assert found == [], "\n".join(found)


def test_no_two_modules_import_each_other_in_a_circle(edges: list[Edge]) -> None:
    found = circles(edges)
    assert found == [], "\n".join(" <-> ".join(c) for c in found)


def test_interfaces_reach_storage_only_through_the_api(edges: list[Edge]) -> None:
    reaching = sorted(
        f"{e.importer}:{e.line} imports {e.imported}"
        for e in edges
        if _top(e.importer) in INTERFACES
        and _top(e.imported) in STORAGE
        and (e.importer, e.imported) not in INTERFACE_EXCEPTIONS
    )
    assert reaching == [], "\n".join(reaching)


def test_the_named_exceptions_are_still_needed(edges: list[Edge]) -> None:
    present = {(e.importer, e.imported) for e in edges}
    assert sorted(set(UPWARD_EXCEPTIONS) - present) == []
    assert sorted(set(INTERFACE_EXCEPTIONS) - present) == []


def test_the_graph_sees_lazy_and_type_only_imports(edges: list[Edge]) -> None:
    """The reader itself: a lazy import in a method and a TYPE_CHECKING one are both edges."""
    from_api = {(e.imported, e.type_only) for e in edges if e.importer == "elfmem.api"}
    assert ("elfmem.rhythms.sessions", False) in from_api  # inside MemorySystem.begin_session
    assert ("elfmem.store", True) in from_api
