"""The signing keys the processes on one store record (AP29).

Each process records its active key's public half at start-up, so the
store knows every key its certificates may carry, and each process can tell
at once whether it could verify what the others sign: a process that cannot
would answer COUNTERFEIT for their products (docs/design.md, "Certificates").
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime

from domain.datetimes import format_datetime
from domain.errors import ConditionFailed, ProofgateError
from domain.signing import KeyRing, VerifyingKey
from storage import ItemAbsent, Put, Storage
from storage.access_patterns import SIGNING_KEYS

__all__ = ["KeyAgreement", "published_keys", "record_active_key", "recorded_keys"]

_TENANT = "keyring"
# Keys are a handful for the life of a deployment; past this many something
# is generating them (a process without its key file) and the log says so.
MAX_KEYS = 1000


@dataclass(frozen=True)
class KeyAgreement:
    """What recording found: ``recorded`` the store's keys after recording,
    ``new`` whether this process's key was new to it, ``unverifiable`` the
    store's keys this process's ring lacks."""

    recorded: tuple[VerifyingKey, ...]
    new: bool
    unverifiable: tuple[str, ...]


def _item(key: VerifyingKey, now: datetime) -> dict[str, object]:
    pk, sk = SIGNING_KEYS.partition({}), f"KEY#{key.kid}"
    return {
        "PK": pk,
        "SK": sk,
        "entity": "SigningKeyRecord",
        "keyId": key.kid,
        "publicKeyPem": key.public_key_pem,
        "recordedAt": format_datetime(now),
    }


async def recorded_keys(storage: Storage) -> tuple[VerifyingKey, ...]:
    """Every readable recorded key; a record that does not parse, or whose
    key id does not match its key, is not a key anyone signs with."""
    keys: list[VerifyingKey] = []
    after: str | None = None
    while len(keys) < MAX_KEYS:
        page = await storage.query(SIGNING_KEYS, {}, tenant=_TENANT, first=100, after=after)
        for item in page.items:
            with contextlib.suppress(ProofgateError):
                key = VerifyingKey.from_pem(str(item.get("publicKeyPem", "")).encode())
                if key.kid == item.get("keyId"):
                    keys.append(key)
        if not page.has_next_page:
            break
        after = page.end_cursor
    return tuple(keys)


async def record_active_key(storage: Storage, ring: KeyRing, now: datetime) -> KeyAgreement:
    new = True
    try:
        await storage.transact_write([Put(_item(ring.active.verifying_key, now), ItemAbsent())])
    except ConditionFailed:
        new = False
    recorded = await recorded_keys(storage)
    unverifiable = tuple(key.kid for key in recorded if ring.get(key.kid) is None)
    return KeyAgreement(recorded, new, unverifiable)


async def published_keys(storage: Storage, ring: KeyRing) -> list[VerifyingKey]:
    """This process's keys, the active one first, then the store's others:
    every key a certificate from any process of the fleet may name."""
    mine = ring.published()
    known = {key.kid for key in mine}
    others = sorted(
        (k for k in await recorded_keys(storage) if k.kid not in known), key=lambda k: k.kid
    )
    return [*mine, *others]
