"""`DOCENT_RAY_ADDRESS`: which values start-up accepts, and that an API without it never touches Ray."""

from __future__ import annotations

import pytest

from rag_system.config import ConfigError, load_settings


def _load(**env: str):  # type: ignore[no-untyped-def]
    return load_settings(environ=env, dotenv_path=None)


@pytest.mark.parametrize("value", ["local:1", "local:16", "ray://head:10001", "ray://10.0.0.5:10001", "ray://head"])
def test_usable_addresses_are_kept(value: str) -> None:
    assert _load(DOCENT_RAY_ADDRESS=value).ray_address == value


@pytest.mark.parametrize("value", ["local:0", "local:", "local:two", "head:10001", "ray://", "ray://h:p",
                                   "ray://head:10001/x", "auto"])
def test_unusable_addresses_are_refused_by_name(value: str) -> None:
    with pytest.raises(ConfigError, match="DOCENT_RAY_ADDRESS must be empty .* local:N .* ray://host:port"):
        _load(DOCENT_RAY_ADDRESS=value)


def test_unset_means_builds_in_the_api_process() -> None:
    from rag_system.api.jobs import JobQueue
    from rag_system.api.paths import AllowedRoots

    settings = _load()
    assert settings.ray_address == ""
    jobs = JobQueue(settings, object(), AllowedRoots.from_settings(settings))  # type: ignore[arg-type]
    assert jobs.ray is None
    configured = _load(DOCENT_RAY_ADDRESS="local:2")
    ray_jobs = JobQueue(configured, object(), AllowedRoots.from_settings(configured))  # type: ignore[arg-type]
    assert ray_jobs.ray is not None and ray_jobs.ray.address == "local:2" and not ray_jobs.ray.connected


def test_the_api_refuses_to_start_with_a_bad_address(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from rag_system.cli.main import main

    monkeypatch.setenv("DOCENT_RAY_ADDRESS", "ray:/head")
    assert main(["api", "--port", "0"]) == 2
    assert "DOCENT_RAY_ADDRESS must be empty" in capsys.readouterr().err


def test_ray_is_not_imported_unless_a_build_goes_to_it() -> None:
    import subprocess
    import sys

    from testkit import REPO_ROOT

    code = ("import sys; from rag_system.config import load_settings; from rag_system.api.jobs import JobQueue; "
            "from rag_system.api.paths import AllowedRoots; "
            "s = load_settings(environ={'DOCENT_RAY_ADDRESS': 'local:2'}, dotenv_path=None); "
            "JobQueue(s, object(), AllowedRoots.from_settings(s)); print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
