"""The registration command behind registerProduct and registerProducts.

Everything is validated before the first write, so bad input writes nothing.
Each transaction then registers up to ``PRODUCTS_PER_TRANSACTION`` products
(fewer with serials) atomically. A batch that fails part-way keeps the transactions that
committed (the error lists their ids in ``extensions.registeredIds``); with an
idempotencyKey, retrying the same request registers only what is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.errors import BadUserInput, ConditionFailed, Conflict, NotFound, ProofgateError
from domain.identifiers import new_id
from storage import Item, WriteAction
from storage.access_patterns import PRODUCT_BY_ID

from ..context import CommandContext
from ..idempotency import Idempotency, RecordStatus
from ..ledger import ledger_failure
from ..transact import transact
from .drafts import ProductDraft
from .fee import BatchFee
from .registration import (
    PlannedProduct,
    Slot,
    chunk_actions,
    chunk_plans,
    locate_action,
    plan_product,
)

__all__ = ["check_batch", "register_products"]


def check_batch(drafts: Sequence[ProductDraft], fields: Sequence[str]) -> None:
    """One brand per batch (its counters, fee and idempotency scope), and no
    product twice: the second would only fail after the first committed."""
    seen: dict[str, str] = {}
    for draft, field in zip(drafts, fields, strict=True):
        if draft.brand_id != drafts[0].brand_id:
            raise BadUserInput(
                f"{field}.brandId: a batch registers products of one brand",
                hint="Send one batch per brand.",
            )
        earlier = seen.setdefault(draft.name_digest, field)
        if earlier != field:
            raise BadUserInput(f"{field}: same name and sku as {earlier}")
        if draft.gtin is not None and draft.serial is not None:
            unit = f"GTIN#{draft.gtin}#{draft.serial}"
            earlier = seen.setdefault(unit, field)
            if earlier != field:
                raise BadUserInput(f"{field}.serial: same GTIN and serial as {earlier}")


async def register_products(
    context: CommandContext,
    drafts: Sequence[ProductDraft],
    fields: Sequence[str],
    *,
    operation: str,
    idempotency_key: str | None,
) -> list[Item]:
    """The stored products, in input order."""
    brand_id = drafts[0].brand_id
    context.principal.require_write(brand_id)
    check_batch(drafts, fields)
    now = context.now()
    idempotency = Idempotency.of(
        idempotency_key, scope=brand_id, operation=operation, body=list(drafts)
    )
    resumed = await _resume(context, idempotency, now)
    if resumed.complete and resumed.ids is not None:
        return await _load(context, resumed.ids)
    plan = await _plan(context, drafts, resumed.ids, now)
    fee = await BatchFee.choose(context, brand_id, len(plan.chunks), plan.count, now)
    try:
        return await _commit(
            context, plan, fee, idempotency, operation=operation, fields=fields, now=now
        )
    finally:
        await fee.release(context.storage)


@dataclass(frozen=True)
class _Resumed:
    ids: list[str] | None
    """The product ids an earlier request with the same idempotencyKey chose."""
    complete: bool


async def _resume(
    context: CommandContext, idempotency: Idempotency | None, now: datetime
) -> _Resumed:
    """What an earlier request with the same key left, so a retry registers
    only what is missing, under the same ids."""
    record = None if idempotency is None else await idempotency.lookup(context.loaders, now)
    if record is None:
        return _Resumed(None, complete=False)
    ids = list(record["result"]["productIds"])
    return _Resumed(ids, complete=record["status"] == RecordStatus.COMPLETE)


@dataclass(frozen=True)
class _Plan:
    ids: list[str]
    existing: dict[str, Item]
    """Products of ``ids`` an interrupted earlier attempt already registered."""
    chunks: list[list[PlannedProduct]]
    resuming: bool

    @property
    def count(self) -> int:
        return sum(len(chunk) for chunk in self.chunks)


async def _plan(
    context: CommandContext,
    drafts: Sequence[ProductDraft],
    resumed_ids: list[str] | None,
    now: datetime,
) -> _Plan:
    ids = resumed_ids if resumed_ids is not None else [new_id(now) for _ in drafts]
    existing = await _load_existing(context, ids) if resumed_ids is not None else {}
    signer = context.services.key_ring.active
    plans = [
        plan_product(position, draft, product_id, now, signer)
        for position, (draft, product_id) in enumerate(zip(drafts, ids, strict=True))
        if product_id not in existing
    ]
    return _Plan(ids, existing, chunk_plans(plans), resuming=resumed_ids is not None)


def _record_action(
    idempotency: Idempotency | None, plan: _Plan, number: int, now: datetime
) -> WriteAction | None:
    """The idempotency record is created with the first transaction (PENDING
    unless that is also the last) and completed by the last."""
    if idempotency is None:
        return None
    result = {"productIds": plan.ids}
    first, last = number == 0 and not plan.resuming, number == len(plan.chunks) - 1
    if first:
        return idempotency.create(
            now, result, RecordStatus.COMPLETE if last else RecordStatus.PENDING
        )
    return idempotency.complete(result) if last else None


async def _commit(
    context: CommandContext,
    plan: _Plan,
    fee: BatchFee,
    idempotency: Idempotency | None,
    *,
    operation: str,
    fields: Sequence[str],
    now: datetime,
) -> list[Item]:
    """One transaction per chunk; the products in input order."""
    written: dict[str, Item] = dict(plan.existing)
    for number, chunk in enumerate(plan.chunks):
        record_action = _record_action(idempotency, plan, number, now)
        extra = [] if record_action is None else [record_action]
        extra.extend(fee.actions([planned.product_id for planned in chunk], now))
        actions = chunk_actions(
            chunk, principal=context.principal, action=operation, now=now, extra=extra
        )
        try:
            await transact(context.storage, actions)
        except ConditionFailed as error:
            if idempotency is not None and actions[error.index] is record_action:
                return await _replay(context, idempotency)
            failure = ledger_failure(error, actions)
            raise failure or _explain(error, chunk, fields, list(written)) from None
        fee.settled(len(chunk))
        written.update((planned.product_id, planned.item) for planned in chunk)
    for product_id, item in written.items():
        context.loaders.prime(PRODUCT_BY_ID, item, product_id=product_id)
    return [written[product_id] for product_id in plan.ids]


async def _load(context: CommandContext, ids: Sequence[str]) -> list[Item]:
    items = await context.loaders.items(PRODUCT_BY_ID, [{"product_id": i} for i in ids])
    if any(item is None for item in items):
        raise ProofgateError("An idempotency record names a product that does not exist")
    return [item for item in items if item is not None]


async def _load_existing(context: CommandContext, ids: Sequence[str]) -> dict[str, Item]:
    items = await context.loaders.items(PRODUCT_BY_ID, [{"product_id": i} for i in ids])
    return {
        product_id: item for product_id, item in zip(ids, items, strict=True) if item is not None
    }


async def _replay(context: CommandContext, idempotency: Idempotency) -> list[Item]:
    """A concurrent request with the same key won the record: return its
    result once it is complete."""
    record = await idempotency.lookup(context.loaders, context.now(), fresh=True)
    if record is None or record["status"] != RecordStatus.COMPLETE:
        raise Conflict(
            "A request with this idempotencyKey is still in progress",
            hint="Retry the same request later to receive its result.",
        )
    return await _load(context, list(record["result"]["productIds"]))


def _explain(
    error: ConditionFailed,
    chunk: Sequence[PlannedProduct],
    fields: Sequence[str],
    registered: list[str],
) -> ProofgateError:
    extensions: dict[str, Any] = {"registeredIds": registered} if registered else {}
    position, slot = locate_action(chunk, error.index)
    if position is None:
        if slot == 0:
            return NotFound("Brand not found")
        return Conflict(
            "The registration collided with a concurrent write",
            hint="Retry the request.",
            **extensions,
        )
    planned = chunk[position]
    if slot == Slot.NAME:
        draft = planned.draft
        sku = f"sku {draft.sku!r}" if draft.sku is not None else "no sku"
        return Conflict(
            f"{fields[planned.position]}: the brand already has a product named "
            f"{draft.name!r} with {sku}",
            hint="Change the name or the sku, or use the existing product.",
            **extensions,
        )
    if slot == Slot.GTIN:
        draft = planned.draft
        return Conflict(
            f"{fields[planned.position]}.serial: GTIN {draft.gtin} already has a product "
            f"with serial {draft.serial!r}",
            hint="A serial names one unit of a GTIN: give this unit its own serial.",
            **extensions,
        )
    return Conflict(
        "The registration collided with a concurrent write", hint="Retry the request.", **extensions
    )
