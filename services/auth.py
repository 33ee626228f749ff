"""Who is calling, and what they may reach.

A key never reaches another brand's data: a foreign brand's id answers exactly
as a missing one does (NOT_FOUND), so not even existence leaks.
"""

from __future__ import annotations

import hmac
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from domain.errors import Forbidden, NotFound, Unauthenticated
from domain.identifiers import hash_api_key
from storage import Storage
from storage.access_patterns import API_KEY_BY_HASH

__all__ = ["ANONYMOUS", "KeyCache", "Principal", "Role", "authenticate"]

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

KEY_CACHE_ENTRIES = 10_000


class KeyCache:
    """Keys read in the last ``ttl``, so a busy key costs one consistent read
    per ``ttl`` per process instead of one per request (docs/design.md,
    API keys). Only valid keys are kept; a revocation in this process forgets
    its key at once, one in another process is seen here within ``ttl``.
    At most ``entries`` keys, least recently used out first."""

    def __init__(
        self,
        ttl: timedelta,
        *,
        entries: int = KEY_CACHE_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl.total_seconds()
        self._entries = entries
        self._clock = clock
        self._keys: OrderedDict[str, tuple[float, Principal]] = OrderedDict()
        self._forgotten: OrderedDict[str, float] = OrderedDict()
        """Keys revoked here in the last ``ttl``: a read that began before the
        revocation must not put its key back."""

    def get(self, key_hash: str) -> Principal | None:
        found = self._keys.get(key_hash)
        if found is None:
            return None
        read_at, principal = found
        if self._clock() - read_at >= self._ttl:
            del self._keys[key_hash]
            return None
        self._keys.move_to_end(key_hash)
        return principal

    def put(self, key_hash: str, principal: Principal, read_at: float) -> None:
        """``read_at``: the clock before the read began, so an entry never
        outlives a revocation that committed while it was being read."""
        if self._ttl <= 0:
            return
        forgotten = self._forgotten.get(key_hash)
        if forgotten is not None and forgotten >= read_at:
            return
        self._keys[key_hash] = (read_at, principal)
        self._keys.move_to_end(key_hash)
        while len(self._keys) > self._entries:
            self._keys.popitem(last=False)

    def forget(self, key_hash: str) -> None:
        """This process revoked the key: no request it answers from now on,
        or whose read of the key was already under way, accepts it."""
        self._keys.pop(key_hash, None)
        now = self._clock()
        self._forgotten[key_hash] = now
        self._forgotten.move_to_end(key_hash)
        while self._forgotten and (
            len(self._forgotten) > self._entries
            or now - next(iter(self._forgotten.values())) >= self._ttl
        ):
            self._forgotten.popitem(last=False)

    def now(self) -> float:
        return self._clock()


async def authenticate(
    storage: Storage,
    authorization: str | None,
    admin_key_hash: str,
    keys: KeyCache | None = None,
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
    if keys is not None and (known := keys.get(key_hash)) is not None:
        return known
    read_at = keys.now() if keys is not None else 0.0
    record = await storage.get(API_KEY_BY_HASH, key_hash=key_hash)
    if record is None or record.get("revokedAt"):
        if record is not None and record.get("integrationId"):
            raise Unauthenticated(
                "This ingest key's integration was revoked",
                hint="Ask the brand for a new integration and its key.",
                reason="REVOKED_INTEGRATION",
            )
        raise Unauthenticated("Invalid or revoked API key")
    principal = Principal(
        Role(record["role"]), record["brandId"], record["id"], record.get("integrationId")
    )
    if keys is not None:
        keys.put(key_hash, principal, read_at)
    return principal
