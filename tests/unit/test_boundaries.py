"""The layering of Documentation/architecture.md, checked on every import statement (an AST walk).

The gateway and the engine talk over HTTP only and share `common/` (which imports neither); the
launcher spawns services and imports none of them; ingestion and chunking know nothing of queries or
answers; eval/ and tests/ share `testkit/` and never import each other. And no first-party module
imports itself back through others, not even from inside a function: a cycle is a dependency that
only works because of the order things happen to load in.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit import REPO_ROOT

#: (files under this path, may not import this package, why)
RULES: list[tuple[str, str, str]] = [
    ("backend", "rag_system", "the gateway talks to the engine over HTTP only"),
    ("rag_system", "backend", "the engine never imports the gateway"),
    *[(launcher, service, "the launcher spawns services, it never imports them")
      for launcher in ("launcher", "run_system.py") for service in ("rag_system", "backend", "frontend")],
    *[("common", upper, "the ground floor imports nothing above it")
      for upper in ("rag_system", "backend", "launcher", "frontend", "testkit")],
    *[(lower, f"rag_system.{upper}", "ingestion and chunking know nothing of queries or answers")
      for lower in ("rag_system/ingestion", "rag_system/chunking") for upper in ("generation", "retrieval", "agent")],
    *[("rag_system/embedding", f"rag_system.{upper}", "embedding sits below indexing and retrieval")
      for upper in ("indexing", "retrieval", "generation", "grounding", "agent", "tasks", "api", "cli")],
    ("rag_system/retrieval", "rag_system.generation", "ranking never calls the writer"),
    ("rag_system/retrieval", "rag_system.agent", "retrieval sits below the agent"),
    ("rag_system/generation", "rag_system.agent", "generation sits below the agent"),
    ("eval", "tests", "the harness shares testkit with the tests, it does not import them"),
    ("tests", "eval", "the tests share testkit with the harness, they do not import it"),
    ("testkit", "tests", "the test kit serves the tests, it does not import them"),
    ("testkit", "eval", "the test kit serves the harness, it does not import it"),
]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path) -> list[list[str]]:
    """Per import statement, the absolute names it may load (relative imports resolved against the package).

    `from pkg import sub` may load `pkg.sub`, so a statement also names `pkg.<each imported name>`.
    """
    statements: list[list[str]] = []
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            statements += [[alias.name] for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            statements.append([module, *(f"{module}.{alias.name}" for alias in node.names)])
    return statements


def violations(root: Path, rules: list[tuple[str, str, str]] = RULES) -> list[str]:
    broken: list[str] = []
    for top, banned, why in rules:
        start = root / top
        files = [start] if start.is_file() else sorted(start.rglob("*.py")) if start.is_dir() else []
        for path in files:
            if ".venv" in path.parts or "node_modules" in path.parts:
                continue
            for names in imported_modules(path, root):
                bad = [m for m in names if m == banned or m.startswith(banned + ".")]
                if bad:
                    broken.append(f"{path.relative_to(root)} imports {bad[0]} ({why})")
    return sorted(set(broken))


#: The product's packages, whose import graph must have no cycle.
PRODUCT = ("common", "backend", "rag_system", "launcher", "frontend")


def _running_statements(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that can run, at any depth: not those under `if TYPE_CHECKING:`."""
    for node in body:
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            yield from _running_statements(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _running_statements([child])
            elif isinstance(child, ast.excepthandler | ast.match_case):
                yield from _running_statements(child.body)


def import_graph(root: Path, packages: tuple[str, ...] = PRODUCT) -> dict[str, set[str]]:
    """Module -> the first-party modules it imports (at module level or inside a function).

    `from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`. Importing
    `a.b` also runs `a/__init__.py`, but that implicit edge to the parent package is left out: every
    submodule of a package whose `__init__` imports its submodules would otherwise close a "cycle".
    """
    files = {module_name(path, root): path for top in packages if (root / top).is_dir()
             for path in sorted((root / top).rglob("*.py"))
             if ".venv" not in path.parts and "node_modules" not in path.parts}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets: set[str] = set()
        for node in _running_statements(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
                continue
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            targets |= {f"{module}.{alias.name}" if f"{module}.{alias.name}" in files else module
                        for alias in node.names}
        graph[name] = {target for target in targets if target in files and target != name}
    return graph


def _shortest_cycle(graph: dict[str, set[str]], start: str, within: set[str]) -> list[str]:
    """The shortest path start -> ... -> start through `within` (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target in sorted(graph[node] & within):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    return []


def import_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each cycle as `a -> b -> a`: per strongly connected group, the shortest cycle through each member."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan; the graph is a few hundred modules, recursion is fine
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = {stack.pop()}
            while node not in group:
                group.add(stack.pop())
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles: set[str] = set()
    for group in groups:
        for member in group:
            cycle = _shortest_cycle(graph, member, group)
            turn = cycle.index(min(cycle[:-1]))  # one spelling per cycle: start at its smallest name
            cycles.add(" -> ".join([*cycle[turn:-1], *cycle[:turn], cycle[turn]]))
    return sorted(cycles)


def test_no_first_party_import_cycle() -> None:
    cycles = import_cycles(import_graph(REPO_ROOT))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_a_cycle_through_a_function_level_import_is_reported(tmp_path: Path) -> None:
    for path, source in {"rag_system/__init__.py": "",
                         "rag_system/a.py": "from rag_system import b\n",
                         "rag_system/b.py": "def f():\n    from .c import g\n",
                         "rag_system/c.py": "try:\n    import rag_system.a\nexcept ImportError:\n    pass\n",
                         "rag_system/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                            "    from rag_system.e import X\n",
                         "rag_system/e.py": "from rag_system.d import Y\n"}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source)
    assert import_cycles(import_graph(tmp_path)) == ["rag_system.a -> rag_system.b -> rag_system.c -> rag_system.a"]


def test_the_tree_keeps_its_layers() -> None:
    assert violations(REPO_ROOT) == []


@pytest.mark.parametrize(("path", "source", "expected"), [
    ("backend/x.py", "from rag_system.agent import triage\n", "backend/x.py imports rag_system.agent"),
    ("rag_system/api/x.py", "import backend.store\n", "rag_system/api/x.py imports backend.store"),
    ("launcher/x.py", "from rag_system.api import logs\n", "launcher/x.py imports rag_system.api"),
    ("run_system.py", "import backend\n", "run_system.py imports backend"),
    ("common/x.py", "from rag_system import config\n", "common/x.py imports rag_system"),
    ("rag_system/chunking/x.py", "from ..generation.terms import stem\n",
     "rag_system/chunking/x.py imports rag_system.generation"),
    ("rag_system/ingestion/x.py", "from rag_system import retrieval\n",
     "rag_system/ingestion/x.py imports rag_system.retrieval"),
    ("rag_system/chunking/x.py", "def f():\n    from rag_system.agent.text import words\n",
     "rag_system/chunking/x.py imports rag_system.agent"),
    ("rag_system/embedding/x.py", "from rag_system.indexing.store import ChunkTable\n",
     "rag_system/embedding/x.py imports rag_system.indexing"),
    ("eval/x.py", "from tests.integration import api_support\n", "eval/x.py imports tests"),
    ("tests/unit/x.py", "import eval.metrics\n", "tests/unit/x.py imports eval"),
    ("testkit/x.py", "from eval import corpora\n", "testkit/x.py imports eval"),
])
def test_a_crossing_import_is_reported(tmp_path: Path, path: str, source: str, expected: str) -> None:
    target = tmp_path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source)
    found = violations(tmp_path)
    assert found and all(line.startswith(expected) for line in found), found


def test_imports_within_a_layer_are_allowed(tmp_path: Path) -> None:
    for path, source in {"backend/a.py": "from common.http import ApiError\nfrom backend import store\n",
                         "rag_system/chunking/a.py": "from rag_system.chunking import sentences\n",
                         "eval/tests/test_a.py": "from eval.metrics import mean\nfrom testkit import REPO_ROOT\n",
                         "tests/unit/test_a.py": "from tests.integration.api_support import build\n"}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source)
    assert violations(tmp_path) == []
