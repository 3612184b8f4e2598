"""The harness's own tests share the suite's fixtures through testkit (never through tests/)."""

from testkit.fixtures import clean_env, embedder, offline, settings

offline()

__all__ = ["clean_env", "embedder", "settings"]
