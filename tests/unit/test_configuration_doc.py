"""Every environment variable the settings (engine, gateway and web app) read is documented, and nothing else is."""

from __future__ import annotations

import re
from dataclasses import fields

from backend.config import ENV_VARS as GATEWAY_ENV_VARS
from frontend.server import ENV_VARS as FRONTEND_ENV_VARS
from rag_system.config import Settings
from testkit import REPO_ROOT


def test_configuration_doc_lists_every_variable() -> None:
    doc = (REPO_ROOT / "Documentation" / "configuration.md").read_text()
    rows = re.findall(r"^\| `([A-Z_]+)` \|", doc, flags=re.M)
    assert sorted(rows) == sorted(set(rows)), "a variable is documented twice"
    documented = set(rows)
    variables = {f.metadata["env"] for f in fields(Settings) if "env" in f.metadata} | {"DOCENT_PROFILE"}
    variables |= set(GATEWAY_ENV_VARS) | set(FRONTEND_ENV_VARS)
    assert documented == variables
