"""Shared fixtures (from testkit): offline models, a throwaway data directory, one embedder per run."""

from testkit.fixtures import clean_env, embedder, offline, settings

offline()

__all__ = ["clean_env", "embedder", "settings"]
