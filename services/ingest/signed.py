"""Who sent a signed ``POST /ingest/<source>`` (docs/design.md, Partner ingest).

One GetItem of the named integration (AP31); the signature is checked with
the key derived from the hash salt before anything else about the
integration is revealed, so an unsigned caller learns only whether the id
exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domain.enums import EventSource
from domain.errors import BadUserInput, Forbidden, ProofgateError
from domain.identifiers import hash_api_key
from domain.ingest import INTEGRATION_HEADER, Refusal, check_signature, ingest_key, refused
from storage import Storage
from storage.access_patterns import INTEGRATION_BY_ID

from ..auth import Principal, Role
from .items import parse_integration_id

__all__ = ["SignedRequest", "authenticate_signed"]


@dataclass(frozen=True)
class SignedRequest:
    """What the endpoint hands over: the headers that matter and the raw body."""

    integration: str | None
    signature: str | None
    body: bytes
    source: EventSource


def _unknown() -> ProofgateError:
    return refused(
        Refusal.UNKNOWN_INTEGRATION,
        f"{INTEGRATION_HEADER} names no integration",
        f"Send {INTEGRATION_HEADER}: <the Integration.id createIntegration returned>.",
    )


async def authenticate_signed(
    storage: Storage, salt: bytes, request: SignedRequest, *, now: datetime
) -> Principal:
    if not request.integration:
        raise _unknown()
    try:
        ref = parse_integration_id(request.integration.strip())
    except BadUserInput:
        raise _unknown() from None
    item = await storage.get(INTEGRATION_BY_ID, **ref.params)
    if item is None:
        raise _unknown()
    key = ingest_key(salt, ref.id)
    if hash_api_key(key) != item["keyHash"]:
        raise ProofgateError(
            "An ingest key no longer derives from the hash salt: PROOFGATE_HASH_SALT changed "
            "since the integration was created"
        )
    check_signature(key, request.signature, request.body, now=now)
    if item.get("revokedAt"):
        raise refused(
            Refusal.REVOKED_INTEGRATION,
            "This integration was revoked",
            "Ask the brand for a new integration and its key.",
        )
    source = EventSource(item["source"])
    if source is not request.source:
        raise Forbidden(
            f"This integration posts to /ingest/{source.path}",
            hint=f"Send {source.path} events to /ingest/{source.path}.",
        )
    return Principal(Role.INTEGRATION, ref.brand_id, item["keyHash"], ref.id)
