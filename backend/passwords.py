"""Password hashes: argon2id from `argon2-cffi` with its recommended parameters (RFC 9106 low-memory).

One module so the parameters and the timing of a failed login are decided once: a login for an
unknown user still runs one verification, against a hash made at start-up, so the answer time does
not say whether the name exists.
"""

from __future__ import annotations

from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

MIN_LENGTH = 8
MAX_LENGTH = 1024


class PasswordPolicyError(ValueError):
    """A new password is too short or too long; the message says which."""


@lru_cache(maxsize=1)
def _hasher() -> PasswordHasher:
    return PasswordHasher()


@lru_cache(maxsize=1)
def _decoy() -> str:
    return _hasher().hash("decoy password for unknown users")


def check_policy(password: str) -> None:
    if len(password) < MIN_LENGTH:
        raise PasswordPolicyError(f"the password must be at least {MIN_LENGTH} characters long")
    if len(password) > MAX_LENGTH:
        raise PasswordPolicyError(f"the password must be at most {MAX_LENGTH} characters long")


def hash_password(password: str) -> str:
    check_policy(password)
    return _hasher().hash(password)


def verify_password(stored: str | None, password: str) -> bool:
    """True when `password` matches `stored`; `stored=None` (no such user) costs the same and is False."""
    try:
        return _hasher().verify(stored or _decoy(), password[:MAX_LENGTH]) and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
