"""What registering products writes: the items of each product, and the
transactions they are grouped into.

A transaction holds at most ``TRANSACT_MAX_ITEMS`` actions: five per product
plus the brand's counter, the audit entry, the idempotency record and the
registration fee's actions, so a batch of 100 runs as
``ceil(100 / PRODUCTS_PER_TRANSACTION)`` transactions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from domain.certificates import CertificateRecord, issue_certificate
from domain.enums import ProductStatus
from domain.identifiers import new_verification_code
from domain.signing import SigningKey
from storage import Item, ItemAbsent, ItemExists, Put, Update, WriteAction
from storage.limits import TRANSACT_MAX_ITEMS

from ..analytics.counters import STATUS_PREFIX
from ..audit.items import audit_entry
from ..auth import Principal
from ..brands.items import brand_stats_key
from ..ledger import FEE_ACTIONS
from .drafts import ProductDraft
from .items import (
    certificate_hash_item,
    product_index_item,
    product_item,
    product_name_item,
    verification_code_item,
)

__all__ = [
    "PRODUCTS_PER_TRANSACTION",
    "PRODUCT_ACTIONS",
    "PlannedProduct",
    "Slot",
    "chunk_actions",
    "plan_product",
]


class Slot:
    """Positions of a product's actions within its five."""

    NAME, PRODUCT, CODE, HASH, INDEX = range(5)


PRODUCT_ACTIONS = 5
# brand counters, audit entry, idempotency record, and the fee's actions
_SHARED_ACTIONS = 3 + FEE_ACTIONS
PRODUCTS_PER_TRANSACTION = (TRANSACT_MAX_ITEMS - _SHARED_ACTIONS) // PRODUCT_ACTIONS


@dataclass(frozen=True)
class PlannedProduct:
    position: int
    """Index in the caller's input list, for error messages."""
    draft: ProductDraft
    item: Item
    actions: tuple[WriteAction, ...]

    @property
    def product_id(self) -> str:
        product_id: str = self.item["id"]
        return product_id


def plan_product(
    position: int, draft: ProductDraft, product_id: str, now: datetime, signer: SigningKey
) -> PlannedProduct:
    """Every item is a conditional create: a second writer of any of them
    (a duplicate name, a colliding code) cancels the whole registration."""
    record = CertificateRecord(
        product_id=product_id,
        brand_id=draft.brand_id,
        name=draft.name,
        created_at=now,
        sku=draft.sku,
        metadata=draft.metadata,
    )
    certificate = issue_certificate(record, signer)
    code = new_verification_code()
    ids = {"product_id": product_id, "brand_id": draft.brand_id}
    item = product_item(
        **ids,
        name=draft.name,
        sku=draft.sku,
        category=draft.category,
        description=draft.description,
        metadata=draft.metadata,
        verification_code=code,
        created_at=now,
        certificate=certificate,
    )
    items = [
        product_name_item(
            brand_id=draft.brand_id, name=draft.name, sku=draft.sku, product_id=product_id
        ),
        item,
        verification_code_item(code=code, **ids),
        certificate_hash_item(certificate_hash=certificate.hash, **ids),
        product_index_item(**ids, created_at=now),
    ]
    return PlannedProduct(position, draft, item, tuple(Put(i, ItemAbsent()) for i in items))


def chunk_actions(
    chunk: Sequence[PlannedProduct],
    *,
    principal: Principal,
    action: str,
    now: datetime,
    extra: Sequence[WriteAction] = (),
) -> list[WriteAction]:
    """The products' actions, then the counter update (which also proves the
    brand exists), the audit entry, then ``extra``."""
    brand_id = chunk[0].draft.brand_id
    return [
        *(a for planned in chunk for a in planned.actions),
        Update(
            brand_stats_key(brand_id),
            # Products by status (docs/design.md, "Analytics"), on the same item.
            add={"productCount": len(chunk), f"{STATUS_PREFIX}{ProductStatus.ACTIVE}": len(chunk)},
            condition=ItemExists(),
        ),
        audit_entry(
            principal, action, now, brand_id=brand_id, target_ids=[p.product_id for p in chunk]
        ),
        *extra,
    ]
