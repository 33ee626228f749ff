"""A transaction the driver retried after a 5xx, on a store that ignores its
``ClientRequestToken`` (moto does): the retry fails the condition its own
first attempt made false. Over the real SQLite driver, the first attempt
applied and the retry sent again, as the DynamoDB driver's retry sends it
(issue 27)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from domain.errors import ConditionFailed, ErrorCode
from storage.access_patterns import REGISTRY
from storage.conditions import ItemAbsent
from storage.cursor import CursorCodec
from storage.keys import Key
from storage.sqlite import SqliteDriver
from storage.store import Store
from storage.writes import Put, Update, WriteAction

CURSOR_KEY = bytes(range(32))


class RetriedAfter500:
    """The real driver; each transaction is applied, then sent once more, as
    after a 500 that came after the write applied."""

    def __init__(self, inner: SqliteDriver) -> None:
        self.inner = inner

    async def transact_write(self, actions: Sequence[WriteAction]) -> float:
        await self.inner.transact_write(actions)
        return await self.inner.transact_write(actions)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
async def driver(tmp_path: Path) -> AsyncIterator[SqliteDriver]:
    inner = SqliteDriver(tmp_path / "retried.db")
    await inner.wait_ready()
    try:
        yield inner
    finally:
        await inner.close()


def _actions(n: int, payload: str) -> list[WriteAction]:
    return [
        Put({"PK": f"THING#{n}", "SK": "META", "payload": payload}, ItemAbsent()),
        Update(Key("COUNTER", "META"), add={"things": 1}),
    ]


async def test_a_retry_that_finds_its_own_first_attempt_answers_success(
    driver: SqliteDriver,
) -> None:
    store = Store(RetriedAfter500(driver), CursorCodec(CURSOR_KEY), REGISTRY)  # type: ignore[arg-type]
    await store.transact_write(_actions(1, "mine"))
    stored, _ = await driver.get_item(Key("COUNTER", "META"), True)
    assert stored is not None and stored["things"] == 1


async def test_a_condition_another_write_made_false_is_a_coded_conflict_in_a_clients_words(
    driver: SqliteDriver,
) -> None:
    """The positive control: the item is someone else's, so nothing proves
    the transaction applied, and the answer says what may have happened."""
    await Store(driver, CursorCodec(CURSOR_KEY), REGISTRY).transact_write(_actions(2, "theirs"))
    store = Store(RetriedAfter500(driver), CursorCodec(CURSOR_KEY), REGISTRY)  # type: ignore[arg-type]
    with pytest.raises(ConditionFailed) as failed:
        await store.transact_write(_actions(2, "mine"))
    error = failed.value
    assert error.code is ErrorCode.CONFLICT
    assert "action 0" not in error.message and "first attempt" in error.message
    assert error.hint and "did not hold" in error.detail
