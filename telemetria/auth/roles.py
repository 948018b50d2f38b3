"""Roles, what each may do, and the authenticated principal every guarded request carries."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    ADMIN = "admin"  # the Secretaria's coordinator: everything, including users
    MONITOR = "monitor"  # the designated servidor (Art. 15 §8): reads all, edits the registry
    AUDITOR = "auditor"  # control bodies (TCE, MP, Câmara, CACS-FUNDEB): reads all and exports
    CONTRACTOR = "contractor"  # a contracted company: reads its own fleet only


class Perm(StrEnum):
    READ = "read"  # registry, positions and reports (scoped for contractors)
    EXPORT = "export"  # CSV/GeoJSON/GPX exports
    WRITE_REGISTRY = "write_registry"  # vehicles, trackers, drivers, routes, assignments, zones
    READ_PERSONAL = "read_personal"  # full CPF and other personal data (LGPD: only who needs it)
    READ_AUDIT = "read_audit"
    MANAGE_USERS = "manage_users"
    OWN_TOKENS = "own_tokens"  # create and revoke one's own API tokens
    REOPEN_MEASUREMENT = "reopen_measurement"  # reopen a closed month's boletim de medição (admin only)
    REVIEW_OCCURRENCES = "review_occurrences"  # confirm or dismiss a finding, issue its Termo, close a decided one
    DECIDE_OCCURRENCES = "decide_occurrences"  # the decision (Art. 42): admin, or a user flagged `designated`
    DEFEND_OCCURRENCES = "defend_occurrences"  # answer a Termo (contractor users only: their own occurrences)
    CLASSIFY_OCCURRENCES = "classify_occurrences"  # edit each kind's article and severity (admin only)


PERMISSIONS: dict[Role, frozenset[Perm]] = {
    # Everything but a defence, which only the contractor's own users write (Art. 41: it is their answer).
    Role.ADMIN: frozenset(Perm) - {Perm.DEFEND_OCCURRENCES},
    Role.MONITOR: frozenset(
        {Perm.READ, Perm.EXPORT, Perm.WRITE_REGISTRY, Perm.READ_PERSONAL, Perm.OWN_TOKENS, Perm.REVIEW_OCCURRENCES}
    ),
    Role.AUDITOR: frozenset({Perm.READ, Perm.EXPORT, Perm.READ_AUDIT, Perm.OWN_TOKENS}),
    Role.CONTRACTOR: frozenset({Perm.READ, Perm.EXPORT, Perm.OWN_TOKENS, Perm.DEFEND_OCCURRENCES}),
}


@dataclass(frozen=True, slots=True)
class Principal:
    user_id: int
    username: str
    role: Role
    contractor_id: int | None
    via: str  # "session" or "token"
    session_hash: bytes | None = None
    token_id: int | None = None

    def can(self, perm: Perm) -> bool:
        return perm in PERMISSIONS[self.role]

    @property
    def scope(self) -> int | None:
        """The only contractor whose data this principal may see, or None for all of them."""
        return self.contractor_id if self.role is Role.CONTRACTOR else None
