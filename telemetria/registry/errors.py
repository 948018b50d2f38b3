"""Errors of registry requests: each names the field at fault and maps to an HTTP status."""

from __future__ import annotations


class RegistryError(ValueError):
    """A registry request that cannot be carried out; the message says why."""

    status = 400

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class NotFound(RegistryError):
    status = 404


class Conflict(RegistryError):
    status = 409
