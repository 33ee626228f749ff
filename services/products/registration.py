"""What registering products writes: the items of each product, and the
transactions they are grouped into.

A transaction holds at most ``TRANSACT_MAX_ITEMS`` actions: five per product
(six for one with a GTIN and a serial) plus the brand's counter, the audit
entry, the idempotency record and the registration fee's actions, so a batch
of 100 products without serials runs as ``ceil(100 / PRODUCTS_PER_TRANSACTION)``
transactions.
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
    gtin_serial_item,
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
    "chunk_plans",
    "locate_action",
    "plan_product",
]


class Slot:
    """Positions of a product's actions within its five (six)."""

    NAME, PRODUCT, CODE, HASH, INDEX, GTIN = range(6)


PRODUCT_ACTIONS = 5
"""A product's actions; one with a GTIN and a serial has one more (``Slot.GTIN``)."""
# brand counters, audit entry, idempotency record, and the fee's actions
_SHARED_ACTIONS = 3 + FEE_ACTIONS
_PRODUCT_ACTION_BUDGET = TRANSACT_MAX_ITEMS - _SHARED_ACTIONS
PRODUCTS_PER_TRANSACTION = _PRODUCT_ACTION_BUDGET // PRODUCT_ACTIONS
"""Products of a transaction when none has a serial; fewer fit otherwise."""


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
    gs1 = draft.gs1
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
        gs1=gs1,
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
    if draft.gtin is not None and draft.serial is not None:
        # Its own conditional create: one product per GTIN and serial.
        items.append(
            gtin_serial_item(
                gtin=draft.gtin,
                serial=draft.serial,
                lot=draft.lot,
                code=code,
                name=draft.name,
                **ids,
            )
        )
    return PlannedProduct(position, draft, item, tuple(Put(i, ItemAbsent()) for i in items))


def chunk_plans(plans: Sequence[PlannedProduct]) -> list[list[PlannedProduct]]:
    """Products in input order, as many to a transaction as their actions fit."""
    chunks: list[list[PlannedProduct]] = []
    used = _PRODUCT_ACTION_BUDGET
    for planned in plans:
        if used + len(planned.actions) > _PRODUCT_ACTION_BUDGET:
            chunks.append([])
            used = 0
        chunks[-1].append(planned)
        used += len(planned.actions)
    return chunks


def locate_action(chunk: Sequence[PlannedProduct], index: int) -> tuple[int | None, int]:
    """The position in ``chunk`` and the slot of the action at ``index`` of
    ``chunk_actions``; past the products' actions, None and the index among
    the shared ones (the brand's counter first)."""
    for position, planned in enumerate(chunk):
        if index < len(planned.actions):
            return position, index
        index -= len(planned.actions)
    return None, index


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
