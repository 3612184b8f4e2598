"""Each Python step of an image build finds every first-party module it imports.

The RAG API image copies `config.py` and the model resolver alone before joining the GGUF parts, so
that layer is cached across code changes. A new import in one of those files then builds fine in a
clone and fails only in `make test-deploy` ("No module named ..."), half an hour in. This reads each
stage's COPY lines and each `RUN python -c/-m` step and follows the imports the way Python would.
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

from testkit import REPO_ROOT
from tests.unit.test_deploy_files import dockerfile

FIRST_PARTY = ("backend", "common", "frontend", "launcher", "rag_system")


def _module_file(module: str) -> Path | None:
    """The repository file Python would load for `module`, or None when it is not first-party."""
    base = REPO_ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _imported(path: Path) -> set[str]:
    """First-party modules `path` imports (function-level imports too: they run when called)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in found if m.split(".")[0] in FIRST_PARTY and _module_file(m) is not None}


def _needed_files(modules: set[str]) -> set[Path]:
    """Every file loading `modules` reads: each module's file, its packages' __init__.py, their imports."""
    files: set[Path] = set()
    todo = list(modules)
    while todo:
        module = todo.pop()
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            path = _module_file(".".join(parts[:i]))
            if path is not None and path not in files:
                files.add(path)
                todo.extend(_imported(path))
    return files


def _run_imports(command: str) -> set[str]:
    """First-party modules a RUN line asks Python for (`-m X`, or `import`/`from X import` in `-c`)."""
    names = set(re.findall(r"python3? -m ([\w.]+)", command))
    names |= set(re.findall(r"\bfrom ([\w.]+) import", command)) | set(re.findall(r"\bimport ([\w.]+)", command))
    return {n for n in names if n.split(".")[0] in FIRST_PARTY}


def _python_steps(name: str) -> list[tuple[str, set[str]]]:
    """(RUN command, the repository files COPY had brought into its stage by then), for Python steps."""
    out: list[tuple[str, set[str]]] = []
    copied: set[str] = set()
    for word, args in dockerfile(name):
        if word == "FROM":
            copied = set()
        elif word == "COPY" and "--from" not in args:
            words = [w for w in shlex.split(args) if not w.startswith("--")]
            copied |= {w.rstrip("/") for w in words[:-1]}
        elif word == "RUN" and _run_imports(args):
            out.append((args, set(copied)))
    return out


def _covered(path: Path, copied: set[str]) -> bool:
    rel = path.relative_to(REPO_ROOT).as_posix()
    return any(rel == c or rel.startswith(c + "/") or c == "." for c in copied)


@pytest.mark.parametrize("name", ["Dockerfile.rag-api", "Dockerfile.backend"])
def test_every_python_step_has_the_modules_it_imports(name: str) -> None:
    for command, copied in _python_steps(name):
        missing = sorted(p.relative_to(REPO_ROOT).as_posix() for p in _needed_files(_run_imports(command))
                         if not _covered(p, copied))
        assert not missing, f"{name}: `RUN {command[:80]}…` imports {missing}, not copied before it"


def test_the_check_sees_the_partial_copy_and_what_config_imports() -> None:
    """The rule has something to check: the model-resolution step runs on a partial copy, and config.py
    imports first-party modules beyond itself."""
    steps = _python_steps("Dockerfile.rag-api")
    assert any("rag_system" not in copied and "rag_system/config.py" in copied for _, copied in steps)
    needed = {p.relative_to(REPO_ROOT).as_posix() for p in _needed_files({"rag_system.config"})}
    assert {"rag_system/__init__.py", "rag_system/config.py", "common/options.py"} <= needed
    assert not _covered(REPO_ROOT / "rag_system/localgpt_env.py", {"rag_system/config.py", "common"})
