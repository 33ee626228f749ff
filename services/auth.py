"""Who is calling, and what they may reach.

A key never reaches another brand's data: a foreign brand's id answers exactly
as a missing one does (NOT_FOUND), so not even existence leaks.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from enum import StrEnum

from domain.errors import Forbidden, NotFound, Unauthenticated
from domain.identifiers import hash_api_key
from storage import Storage
from storage.access_patterns import API_KEY_BY_HASH

__all__ = ["ANONYMOUS", "Principal", "Role", "authenticate"]

_BEARER = "bearer "


class Role(StrEnum):
    ADMIN = "ADMIN"
    BRAND = "BRAND"
    PARTNER = "PARTNER"
    INTEGRATION = "INTEGRATION"
    """An ingest key: appends its integration's events (``ingestEvent``) and
    reads nothing (docs/design.md, Partner ingest)."""
    ANONYMOUS = "ANONYMOUS"


@dataclass(frozen=True)
class Principal:
    role: Role
    brand_id: str | None = None
    key_hash: str | None = None
    """The SHA-256 of the caller's API key (its id in AP20); None for the
    operator and anonymous callers."""
    integration_id: str | None = None
    """The integration an ingest key (role INTEGRATION) belongs to."""

    @property
    def tenant(self) -> str:
        """What cursors are bound to: a brand's keys share one tenant."""
        if self.role is Role.ADMIN:
            return "admin"
        return f"brand:{self.brand_id}" if self.brand_id else "public"

    @property
    def is_admin(self) -> bool:
        return self.role is Role.ADMIN

    def require_authenticated(self) -> None:
        if self.role is Role.ANONYMOUS:
            raise Unauthenticated(
                "This operation needs an API key", hint="Send Authorization: Bearer <key>."
            )

    def require_admin(self) -> None:
        self.require_authenticated()
        if not self.is_admin:
            raise Forbidden("This operation needs the operator (admin) key")

    def can_read(self, brand_id: str) -> bool:
        return self.is_admin or (
            self.brand_id == brand_id and self.role in (Role.BRAND, Role.PARTNER)
        )

    def require_read(self, brand_id: str, what: str = "Brand") -> None:
        self.require_authenticated()
        if not self.can_read(brand_id):
            raise NotFound(f"{what} not found")

    def require_write(self, brand_id: str, what: str = "Brand") -> None:
        self.require_read(brand_id, what)
        if self.role is Role.PARTNER:
            raise Forbidden("Partner keys are read-only")


ANONYMOUS = Principal(Role.ANONYMOUS)


async def authenticate(
    storage: Storage, authorization: str | None, admin_key_hash: str
) -> Principal:
    """Resolve an ``Authorization: Bearer <key>`` value; no header is anonymous."""
    if not authorization:
        return ANONYMOUS
    if not authorization[: len(_BEARER)].lower() == _BEARER:
        raise Unauthenticated(
            "Malformed Authorization header", hint="Use: Authorization: Bearer <key>."
        )
    key_hash = hash_api_key(authorization[len(_BEARER) :].strip())
    if hmac.compare_digest(key_hash, admin_key_hash):
        return Principal(Role.ADMIN)
    record = await storage.get(API_KEY_BY_HASH, key_hash=key_hash)
    if record is None or record.get("revokedAt"):
        if record is not None and record.get("integrationId"):
            raise Unauthenticated(
                "This ingest key's integration was revoked",
                hint="Ask the brand for a new integration and its key.",
                reason="REVOKED_INTEGRATION",
            )
        raise Unauthenticated("Invalid or revoked API key")
    return Principal(
        Role(record["role"]), record["brandId"], record["id"], record.get("integrationId")
    )
