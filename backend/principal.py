"""Who is asking: the one person of single-user mode, a service, a signed-in user, or nobody yet."""

from __future__ import annotations

from dataclasses import dataclass

#: Higher may do everything lower may.
ROLE_RANK = {"viewer": 1, "editor": 2, "admin": 3}


@dataclass(frozen=True)
class Principal:
    kind: str  # "single" | "service" | "user" | "anonymous"
    user_id: str | None = None
    username: str = ""
    role: str = ""
    via: str = ""  # how a user proved it: "cookie" or "token"
    csrf: str = ""

    @property
    def unrestricted(self) -> bool:
        """Single-user mode and the RAG API's service calls see everything, as before accounts."""
        return self.kind in ("single", "service")

    @property
    def is_admin(self) -> bool:
        return self.unrestricted or (self.kind == "user" and self.role == "admin")

    def at_least(self, role: str) -> bool:
        return self.unrestricted or (self.kind == "user" and ROLE_RANK.get(self.role, 0) >= ROLE_RANK[role])

    @property
    def label(self) -> str:
        """The audit log's actor."""
        return self.username if self.kind == "user" else self.kind

    def public(self) -> dict[str, object]:
        return {"id": self.user_id, "username": self.username, "role": self.role}


SINGLE = Principal("single", role="admin")
SERVICE = Principal("service", role="admin")
ANONYMOUS = Principal("anonymous")
