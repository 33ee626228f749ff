"""Who a product was transferred to: the brand's business, not the public's
(docs/design.md, Transferees).

A transfer's event is public (anyone who can see the product reads its
chain), so the chain hashes a keyed digest of the recipient, never the name:
``data.to`` is ``hmac-sha256:<hex>`` (keyed by ``PROOFGATE_HASH_SALT``, so a
guessed name cannot be checked against it), and the name itself is kept on
the event item outside the hashed fields, for the brand's keys. Events stored
before this carry the name in ``data.to``; readers other than the brand see
it replaced by the same digest (their copy of such an event then no longer
recomputes its hash; ``verification`` still checks the stored one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.canonical import JSONObject
from domain.enums import ProvenanceEventType
from domain.identifiers import salted_hash
from storage import Item

__all__ = ["RECIPIENT", "public_data", "recipient_digest", "recipient_of", "transfer_data"]

RECIPIENT = "recipient"
"""The event item's attribute holding the recipient, outside the hashed fields."""
_PREFIX = "hmac-sha256:"


def recipient_digest(salt: bytes, recipient: str) -> str:
    return _PREFIX + salted_hash(salt, "transferee", recipient)


def transfer_data(salt: bytes, recipient: str, reason: str | None) -> JSONObject:
    """What a transfer's event hashes."""
    data: JSONObject = {"to": recipient_digest(salt, recipient)}
    if reason is not None:
        data["reason"] = reason
    return data


def _stored_in_clear(item: Item) -> str | None:
    """The recipient of a transfer stored before recipients were digested."""
    if item.get("type") != ProvenanceEventType.TRANSFERRED.value or RECIPIENT in item:
        return None
    data = item.get("data")
    to = data.get("to") if isinstance(data, Mapping) else None
    return to if isinstance(to, str) and not to.startswith(_PREFIX) else None


def recipient_of(item: Item) -> str | None:
    recipient = item.get(RECIPIENT)
    if isinstance(recipient, str):
        return recipient
    return _stored_in_clear(item)


def public_data(item: Item, salt: bytes) -> dict[str, Any]:
    """The event's data as anyone but the brand sees it."""
    data = dict(item.get("data") or {})
    clear = _stored_in_clear(item)
    if clear is not None:
        data["to"] = recipient_digest(salt, clear)
    return data
