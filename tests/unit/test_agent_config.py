"""The agent layer's settings: defaults, environment, and values it cannot use."""

from __future__ import annotations

import pytest

from rag_system.config import ConfigError, load_settings


def test_defaults() -> None:
    s = load_settings(environ={}, dotenv_path=None)
    assert (s.agent_llm, s.cache_enabled, s.cache_threshold, s.cache_max_entries, s.cache_ttl_s) == \
        (False, True, 0.98, 64, 900.0)
    assert (s.memory_turns, s.decompose_max_parts, s.reformulate) == (6, 3, False)


def test_from_environment() -> None:
    s = load_settings(environ={"AGENT_LLM": "yes", "SEMANTIC_CACHE": "off", "SEMANTIC_CACHE_THRESHOLD": "0.95",
                               "SEMANTIC_CACHE_SIZE": "10", "SEMANTIC_CACHE_TTL_S": "60", "MEMORY_TURNS": "0",
                               "DECOMPOSE_MAX_PARTS": "2", "REFORMULATE": "true"}, dotenv_path=None)
    assert (s.agent_llm, s.cache_enabled, s.cache_threshold, s.cache_max_entries, s.cache_ttl_s) == \
        (True, False, 0.95, 10, 60.0)
    assert (s.memory_turns, s.decompose_max_parts, s.reformulate) == (0, 2, True)


@pytest.mark.parametrize("env, fragment", [
    ({"SEMANTIC_CACHE_THRESHOLD": "0"}, "SEMANTIC_CACHE_THRESHOLD"),
    ({"SEMANTIC_CACHE_THRESHOLD": "1.01"}, "SEMANTIC_CACHE_THRESHOLD"),
    ({"SEMANTIC_CACHE_SIZE": "0"}, "SEMANTIC_CACHE_SIZE"),
    ({"SEMANTIC_CACHE_TTL_S": "-5"}, "SEMANTIC_CACHE_TTL_S"),
    ({"MEMORY_TURNS": "-1"}, "MEMORY_TURNS"),
    ({"DECOMPOSE_MAX_PARTS": "4"}, "DECOMPOSE_MAX_PARTS"),
    ({"DECOMPOSE_MAX_PARTS": "0"}, "DECOMPOSE_MAX_PARTS"),
])
def test_unusable_values_name_the_variable(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        load_settings(environ=env, dotenv_path=None)
