"""A transaction DynamoDB cancels for contention (TransactionConflict) is
retried and applied exactly once. moto never raises it, so it is injected."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from domain.errors import TransactionCanceled
from services.transact import TRANSACT_MAX_ATTEMPTS
from storage import Storage, WriteAction

GRANT = """mutation($brandId: ID!, $key: String!) {
    grantCredits(brandId: $brandId, amount: "2.00", idempotencyKey: $key) { id }
}"""


class Contended:
    """Cancels the next ``conflicts`` transactions before they reach the store,
    as DynamoDB cancels one that raced another on the same item."""

    def __init__(self, inner: Storage, conflicts: int = 0) -> None:
        self._inner = inner
        self.conflicts = conflicts
        self.attempts = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def transact_write(self, actions: Sequence[WriteAction]) -> None:
        self.attempts += 1
        if self.conflicts:
            self.conflicts -= 1
            reasons: list[str | None] = [None] * len(actions)
            reasons[-1] = "TransactionConflict"
            raise TransactionCanceled("Transaction cancelled", reasons=reasons)
        await self._inner.transact_write(actions)


async def test_a_cancelled_grant_is_retried_and_posts_once(sqlite_api, api_over) -> None:
    storage = Contended(sqlite_api.storage)
    api = api_over(storage)
    brand = await api.brand()
    storage.conflicts, storage.attempts = 2, 0
    body = await api.execute(GRANT, {"brandId": brand.id, "key": uuid.uuid4().hex})
    assert "errors" not in body, body
    assert storage.attempts == 3
    balance = await api.balance(brand)
    assert (balance["posted"], balance["version"]) == ("2.00", 1)


async def test_a_cancelled_registration_charges_once(sqlite_api, api_over) -> None:
    storage = Contended(sqlite_api.storage)
    api = api_over(storage)
    brand = await api.brand("FREE")
    storage.conflicts, storage.attempts = 3, 0
    body = await api.register_product(brand)
    assert "errors" not in body, body
    assert storage.attempts == 4
    balance = await api.balance(brand)
    assert (balance["available"], balance["version"]) == ("9.00", 2)


async def test_contention_that_never_ends_is_unavailable_and_writes_nothing(
    sqlite_api, api_over
) -> None:
    storage = Contended(sqlite_api.storage)
    api = api_over(storage)
    brand = await api.brand("FREE")
    storage.conflicts, storage.attempts = TRANSACT_MAX_ATTEMPTS, 0
    body = await api.register_product(brand)
    assert api.codes(body) == ["SERVICE_UNAVAILABLE"]
    assert storage.attempts == TRANSACT_MAX_ATTEMPTS
    balance = await api.balance(brand)
    assert (balance["available"], balance["version"]) == ("10.00", 1)
