"""How API keys are stored: only the SHA-256 of the key, found by that hash (AP20).

The key's id is its hash. Nothing else is needed to find, revoke or audit a
key, and the hash reveals nothing: the key is 256 random bits.
"""

from __future__ import annotations

from storage import Item
from storage.access_patterns import API_KEY_BY_HASH

__all__ = ["api_key_item"]


def api_key_item(*, key_hash: str, brand_id: str, role: str, name: str, created_at: str) -> Item:
    key = API_KEY_BY_HASH.key(key_hash=key_hash)
    return {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "ApiKey",
        "id": key_hash,
        "brandId": brand_id,
        "role": role,
        "name": name,
        "createdAt": created_at,
    }
