"""How a product is stored.

One registration writes, in one transaction:

- ``PRODUCT#<id>`` / ``META``: the product (AP04), also on GSI1 as
  ``BRAND#<brand>`` / ``PRODUCT#<createdAt>#<id>`` (AP07, newest first);
- ``VERIFY#<code>`` / ``META`` and ``HASH#<sha256>`` / ``META``: lookups from
  the verification code (AP05) and the certificate hash (AP06);
- ``PRODUCT_INDEX`` / ``PRODUCT#<createdAt>#<id>``: the public gallery (AP08);
- ``BRAND#<brand>`` / ``PRODUCT_NAME#<digest>``: the uniqueness item of
  (name, sku) within the brand, created conditionally so concurrent duplicate
  registrations yield exactly one product. No access pattern reads it.

Product attributes that later writes change: ``status``, ``updatedAt``,
``scanCount`` (ADD), and the chain head (``chainSequence``, ``chainHead``,
``chainHeadAt``) that provenance appends advance conditionally. Before the
first event the head is sequence 0 and the certificate hash (``ChainHead.genesis``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from domain.canonical import canonical_json, sha256_hex
from domain.certificates import Certificate, CertificateRecord
from domain.datetimes import format_datetime, parse_datetime
from domain.enums import ProductStatus
from storage import Item, Key, KeyTemplate
from storage.access_patterns import (
    BRAND_PRODUCTS,
    PRODUCT_BY_CODE,
    PRODUCT_BY_GTIN_SERIAL,
    PRODUCT_BY_HASH,
    PRODUCT_BY_ID,
    PRODUCT_GALLERY,
)

__all__ = [
    "PRODUCT_NAME_KEY",
    "PRODUCT_SORT",
    "certificate_hash_item",
    "certificate_record",
    "gtin_serial_item",
    "product_index_item",
    "product_item",
    "product_name_digest",
    "product_name_item",
    "product_status",
    "verification_code_item",
]

# Sort key of AP07 (GSI1SK) and AP08: creation time first, so both read newest first.
PRODUCT_SORT = KeyTemplate("PRODUCT#{created_at:time}#{product_id}")
PRODUCT_NAME_KEY = (KeyTemplate("BRAND#{brand_id}"), KeyTemplate("PRODUCT_NAME#{digest}"))


def product_item(
    *,
    product_id: str,
    brand_id: str,
    name: str,
    sku: str | None,
    category: str | None,
    description: str | None,
    metadata: Mapping[str, object],
    verification_code: str,
    created_at: datetime,
    certificate: Certificate,
    gs1: Mapping[str, str] | None = None,
) -> Item:
    """``gs1``: the product's ``gtin``, ``serial`` and ``lot`` where it has
    them; a product without keeps the attributes it always had."""
    key = PRODUCT_BY_ID.key(product_id=product_id)
    created = format_datetime(created_at)
    return {
        "PK": key.pk,
        "SK": key.sk,
        "GSI1PK": BRAND_PRODUCTS.partition({"brand_id": brand_id}),
        "GSI1SK": PRODUCT_SORT.format({"created_at": created_at, "product_id": product_id}),
        "entity": "Product",
        "id": product_id,
        "brandId": brand_id,
        "name": name,
        "sku": sku,
        "category": category,
        "description": description,
        "metadata": dict(metadata),
        "verificationCode": verification_code,
        "status": ProductStatus.ACTIVE.value,
        "createdAt": created,
        "updatedAt": created,
        "certificateHash": certificate.hash,
        "signature": certificate.signature,
        "keyId": certificate.key_id,
        "algorithm": certificate.algorithm,
        "chainSequence": 0,
        "chainHead": certificate.hash,
        "scanCount": 0,
        **(gs1 or {}),
    }


_STATUSES = {member.value: member for member in ProductStatus}
"""Each status by its stored name: a dict lookup, where the enum's call costs
~4k instructions more, twice a verification (its checks and its scan's facts)."""


def product_status(product: Item) -> ProductStatus:
    """``ProductStatus(product["status"])``, raising as it does."""
    name = product["status"]
    try:
        return _STATUSES[name]
    except (KeyError, TypeError):  # TypeError: a stored value that is no str
        return ProductStatus(name)


def certificate_record(product: Item) -> CertificateRecord:
    """The record a stored product's certificate signs, as registration built
    it; raises ``KeyError``, ``TypeError`` or ``ValueError`` (or a
    ``ProofgateError``) for an item that does not hold one."""
    return CertificateRecord(
        product_id=product["id"],
        brand_id=product["brandId"],
        name=product["name"],
        created_at=parse_datetime(product["createdAt"]),
        sku=product.get("sku"),
        metadata=product.get("metadata"),
    )


def verification_code_item(*, code: str, product_id: str, brand_id: str) -> Item:
    key = PRODUCT_BY_CODE.key(code=code)
    return {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "VerificationCode",
        "productId": product_id,
        "brandId": brand_id,
    }


def gtin_serial_item(
    *,
    gtin: str,
    serial: str,
    lot: str | None,
    product_id: str,
    brand_id: str,
    code: str,
    name: str,
) -> Item:
    """What a GS1 Digital Link resolves to in one key-only read (AP34): the
    product, its code (the verification page's address), its lot (checked
    against the URI's) and its name (the linkset's item description); all
    fixed at registration (docs/design.md, GS1 Digital Link)."""
    key = PRODUCT_BY_GTIN_SERIAL.key(gtin=gtin, serial=serial)
    return {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "GtinSerial",
        "productId": product_id,
        "brandId": brand_id,
        "verificationCode": code,
        "gtin": gtin,
        "serial": serial,
        "lot": lot,
        "name": name,
    }


def certificate_hash_item(*, certificate_hash: str, product_id: str, brand_id: str) -> Item:
    key = PRODUCT_BY_HASH.key(certificate_hash=certificate_hash)
    return {
        "PK": key.pk,
        "SK": key.sk,
        "entity": "CertificateHash",
        "productId": product_id,
        "brandId": brand_id,
    }


def product_index_item(*, product_id: str, brand_id: str, created_at: datetime) -> Item:
    return {
        "PK": PRODUCT_GALLERY.partition({}),
        "SK": PRODUCT_SORT.format({"created_at": created_at, "product_id": product_id}),
        "entity": "ProductIndexEntry",
        "productId": product_id,
        "brandId": brand_id,
    }


def product_name_digest(name: str, sku: str | None) -> str:
    """Hashed so any name and SKU fit a sort key; canonical JSON keeps
    ("a#b", None) and ("a", "#b") apart."""
    return sha256_hex(canonical_json([name, sku], field="product"))


def product_name_item(*, brand_id: str, name: str, sku: str | None, product_id: str) -> Item:
    partition, sort = PRODUCT_NAME_KEY
    key = Key(
        partition.format({"brand_id": brand_id}),
        sort.format({"digest": product_name_digest(name, sku)}),
    )
    return {"PK": key.pk, "SK": key.sk, "entity": "ProductName", "productId": product_id}
