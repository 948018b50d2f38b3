"""Errors of registry requests: each names the field at fault and maps to an HTTP status."""

from __future__ import annotations

from telemetria.http import FieldError


class RegistryError(FieldError):
    """A registry request that cannot be carried out; the message says why."""


class NotFound(RegistryError):
    status = 404


class Conflict(RegistryError):
    status = 409
