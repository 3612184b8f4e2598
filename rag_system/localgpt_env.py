"""localGPT's environment names in a migrated `.env`: honoured where they mean the same, named where not.

A person moving from localGPT brings its `.env`. Silently ignoring it would leave their data in
the wrong place or their model unused with no word said. So each name localGPT read is either
taken as Docent's own setting (when Docent's name is not set too) or reported at start-up with
the reason it is not used (`notes`, logged by the RAG API and the CLI).
"""

from __future__ import annotations

from collections.abc import Mapping

#: localGPT name -> Docent setting with the same meaning.
ALIASES: Mapping[str, str] = {
    "LANCEDB_PATH": "LANCEDB_URI",  # where the index tables live
    "GENERATION_MODEL": "OLLAMA_MODEL",  # the model answers are written with (localGPT ran it on Ollama)
    "RAG_CONFIG_MODE": "DOCENT_PROFILE",  # default | fast
}
#: localGPT names Docent cannot honour, with the reason given at start-up.
IGNORED: Mapping[str, str] = {
    "ENRICHMENT_MODEL": "Docent does not rewrite chunks with a model before embedding (contextual enrichment is "
                        "not implemented); every chunk keeps its document and heading context line instead",
}
_PROFILE_VALUES = ("default", "fast")


def aliased(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with each localGPT name copied to Docent's name when that is not set (Docent's own wins)."""
    out = dict(env)
    for old, new in ALIASES.items():
        value = env.get(old, "")
        if not value or env.get(new):
            continue
        if new == "DOCENT_PROFILE" and value not in _PROFILE_VALUES:
            continue
        out[new] = value
    return out


def notes(env: Mapping[str, str]) -> list[str]:
    """One start-up line per localGPT name found: how it is used, or why it is ignored."""
    out: list[str] = []
    for old, new in ALIASES.items():
        value = env.get(old, "")
        if not value:
            continue
        if env.get(new) and env.get(new) != value:
            out.append(f"{old} (localGPT) is ignored: {new} is set too and Docent uses {new}={env[new]!r}")
        elif new == "DOCENT_PROFILE" and value not in _PROFILE_VALUES:
            out.append(f"{old}={value!r} (localGPT) is ignored: Docent's profiles are {', '.join(_PROFILE_VALUES)} "
                       "(DOCENT_PROFILE)")
        else:
            out.append(f"{old} (localGPT) is used as {new}={value!r}")
    for old, why in IGNORED.items():
        if env.get(old):
            out.append(f"{old} (localGPT) is ignored: {why}")
    return out
