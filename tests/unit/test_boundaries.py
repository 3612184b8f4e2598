"""The layering of Documentation/architecture.md, checked on every import statement (an AST walk).

The gateway and the engine talk over HTTP only and share `common/` (which imports neither); the
launcher spawns services and imports none of them; ingestion and chunking know nothing of queries or
answers; eval/ and tests/ share `testkit/` and never import each other.
"""

from __future__ import annotations

import ast
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
