"""Password hashing (argon2id, argon2-cffi defaults) and the password policy."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_HASHER = PasswordHasher()
# Verified when the username does not exist, so a miss costs as long as a wrong password.
_DUMMY_HASH = _HASHER.hash("not a real password, only for timing")

MIN_LENGTH = 10


class PasswordPolicyError(ValueError):
    pass


def check_policy(password: str, username: str) -> None:
    """Raise PasswordPolicyError naming the rule a new password breaks."""
    if len(password) < MIN_LENGTH:
        raise PasswordPolicyError(f"password: must have at least {MIN_LENGTH} characters")
    if len(password) > 1024:
        raise PasswordPolicyError("password: must have at most 1024 characters")
    if username.lower() in password.lower():
        raise PasswordPolicyError("password: must not contain the username")


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify(password_hash: str | None, password: str) -> bool:
    """True when `password` matches; with no hash (unknown user) still spends the same time."""
    try:
        return _HASHER.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _HASHER.check_needs_rehash(password_hash)
