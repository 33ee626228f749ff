"""A product's passport: one JSON-LD document a third party can check offline
(docs/design.md, "Product passport").

It carries the certificate's canonical record next to the hash, the signature
and the PEM of the key that made it, so whoever holds the document alone can
recompute the hash and verify the signature, with no call back to us. The
supply chain lists every provenance event with its hash links, and says
whether the chain recomputes (``chainIntact``). Reads: the brand (AP01) and
the whole chain (AP09), beside the product the caller already holds.
"""

from __future__ import annotations

import asyncio
from typing import Any

from domain.gtin import gtin_from_sku
from domain.labels import qr_url, verify_url
from storage import Item
from storage.access_patterns import BRAND_BY_ID

from ..context import Reads, Services
from ..products.items import certificate_record
from ..provenance.recipients import public_data
from ..provenance.walk import check_chain, load_chain

__all__ = ["PASSPORT_CONTEXT", "PASSPORT_REGULATION", "passport_for"]

PASSPORT_CONTEXT = "https://schema.org"
PASSPORT_REGULATION = "Regulation (EU) 2024/1781 (ESPR)"
_EVENT_FIELDS = (
    "sequence",
    "type",
    "actor",
    "location",
    "latitude",
    "longitude",
    "occurredAt",
    "data",
    "hash",
    "previousHash",
)


def _record(product: Item) -> dict[str, Any]:
    """The signed record, exactly as hashed (sorted keys, no whitespace)."""
    return dict(certificate_record(product).document())


def _event(item: Item, public_salt: bytes | None) -> dict[str, Any]:
    """Every field the event's hash covers, so a third party recomputes it:
    ``source`` only on events that have one, as it is hashed."""
    event = {name: item.get(name) for name in _EVENT_FIELDS}
    if public_salt is not None:
        event["data"] = public_data(item, public_salt)
    if item.get("source"):
        event["source"] = item["source"]
    for coordinate in ("latitude", "longitude"):
        if event[coordinate] is not None:
            event[coordinate] = str(event[coordinate])
    event["data"] = event["data"] or {}
    return event


def _manufacturer(brand: Item | None, brand_id: str) -> dict[str, Any]:
    return {
        "@type": "Organization",
        "identifier": brand_id,
        "name": brand.get("name") if brand else None,
        "url": f"https://{brand['domain']}" if brand and brand.get("domain") else None,
    }


def _verification(services: Services, product: Item) -> dict[str, Any]:
    key = services.key_ring.get(product["keyId"])
    code = product["verificationCode"]
    return {
        "certificateHash": product["certificateHash"],
        "signature": product["signature"],
        "algorithm": product["algorithm"],
        "keyId": product["keyId"],
        "publicKeyPem": key.public_key_pem if key is not None else None,
        "canonicalRecord": _record(product),
        "verifyUrl": verify_url(services.public_url, code),
        "qrUrl": qr_url(services.public_url, code),
    }


async def passport_for(
    reads: Reads, services: Services, product: Item, *, public: bool
) -> dict[str, Any]:
    """``public``: for a reader other than the brand, whom transfers' recipients
    are not shown (docs/design.md, Transferees)."""
    brand_id: str = product["brandId"]
    brand, chain = await asyncio.gather(
        reads.item(BRAND_BY_ID, brand_id=brand_id), load_chain(reads, product["id"])
    )
    code = product["verificationCode"]
    salt = services.hash_salt if public else None
    return {
        "@context": PASSPORT_CONTEXT,
        "@type": "Product",
        "@id": verify_url(services.public_url, code),
        "regulation": PASSPORT_REGULATION,
        "identification": {
            "gtin": product.get("gtin") or gtin_from_sku(product.get("sku")),
            "serialNumber": product.get("serial") or product["id"],
            "verificationCode": code,
        },
        "product": {
            "name": product["name"],
            "sku": product.get("sku"),
            "category": product.get("category"),
            "description": product.get("description"),
            "metadata": product.get("metadata") or {},
            "status": product["status"],
            "createdAt": product["createdAt"],
        },
        "manufacturer": _manufacturer(brand, brand_id),
        "supplyChain": {
            "chainIntact": check_chain(product, chain).intact,
            "chainHead": product["chainHead"],
            "events": [_event(item, salt) for item in chain],
        },
        "verification": _verification(services, product),
    }
