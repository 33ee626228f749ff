"""Cursors are opaque and bound to access pattern, partition, range and tenant:
anything else is InvalidCursor (BAD_USER_INPUT), raised before any read."""

from __future__ import annotations

import base64
import os

import pytest

from domain.errors import BadUserInput, ErrorCode, InvalidCursor
from storage import Storage
from storage.access_patterns import PRODUCT_SCANS, PROVENANCE_CHAIN
from storage.trace import tracing

from ._support import TENANT, OpenStorage, at, chain_event, put_all, scan_record


async def chain_cursor(storage: Storage, product_id: str) -> str:
    await put_all(storage, [chain_event(product_id, n) for n in range(1, 4)])
    page = await storage.query(PROVENANCE_CHAIN, {"product_id": product_id}, tenant=TENANT, first=1)
    assert page.end_cursor is not None
    return page.end_cursor


async def assert_refused(
    storage: Storage, cursor: str, product_id: str, tenant: str = TENANT
) -> None:
    with tracing() as trace, pytest.raises(InvalidCursor) as raised:
        await storage.query(
            PROVENANCE_CHAIN, {"product_id": product_id}, tenant=tenant, after=cursor
        )
    assert trace.calls == [], "the store read before refusing the cursor"
    assert isinstance(raised.value, BadUserInput)
    assert raised.value.code is ErrorCode.BAD_USER_INPUT
    assert product_id not in raised.value.message


def flip(cursor: str, position: int) -> str:
    replacement = "A" if cursor[position] != "A" else "B"
    return cursor[:position] + replacement + cursor[position + 1 :]


async def test_a_valid_cursor_resumes_and_can_be_reused(storage: Storage, uid: str) -> None:
    cursor = await chain_cursor(storage, uid)
    for _ in range(2):
        page = await storage.query(
            PROVENANCE_CHAIN, {"product_id": uid}, tenant=TENANT, after=cursor
        )
        assert [item["sequence"] for item in page.items] == [2, 3]


async def test_cursors_reveal_no_keys(storage: Storage, uid: str) -> None:
    cursor = await chain_cursor(storage, uid)
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    assert uid not in cursor
    assert uid.encode() not in raw and b"EVENT" not in raw


@pytest.mark.parametrize("where", ["start", "middle", "end"])
async def test_tampered_cursor(storage: Storage, uid: str, where: str) -> None:
    cursor = await chain_cursor(storage, uid)
    position = {"start": 1, "middle": len(cursor) // 2, "end": len(cursor) - 2}[where]
    await assert_refused(storage, flip(cursor, position), uid)


@pytest.mark.parametrize("keep", [0.5, 0.1, -1])
async def test_truncated_cursor(storage: Storage, uid: str, keep: float) -> None:
    cursor = await chain_cursor(storage, uid)
    cut = len(cursor) - 1 if keep == -1 else int(len(cursor) * keep)
    await assert_refused(storage, cursor[:cut], uid)


@pytest.mark.parametrize(
    "garbage",
    [
        "garbage",
        "!!!!",
        "A" * 120,
        "\u00e9\u00e9\u00e9",
        base64.urlsafe_b64encode(b"\x01" + os.urandom(60)).decode().rstrip("="),
        base64.urlsafe_b64encode(b"\x02" + os.urandom(60)).decode(),
    ],
    ids=["word", "punctuation", "long", "non-ascii", "random-v1", "random-v2"],
)
async def test_garbage_cursor(storage: Storage, uid: str, garbage: str) -> None:
    await put_all(storage, [chain_event(uid, 1)])
    await assert_refused(storage, garbage, uid)


async def test_cursor_from_another_access_pattern(storage: Storage, uid: str) -> None:
    """AP10 reads the same partition as AP09; its cursor must still not be accepted."""
    await put_all(storage, [scan_record(uid, at(m)) for m in range(3)])
    page = await storage.query(
        PRODUCT_SCANS, {"product_id": uid, "start": at(0), "end": at(5)}, tenant=TENANT, first=1
    )
    assert page.end_cursor is not None
    await put_all(storage, [chain_event(uid, 1)])
    await assert_refused(storage, page.end_cursor, uid)


async def test_cursor_from_another_partition(storage: Storage, uid: str) -> None:
    cursor = await chain_cursor(storage, f"{uid}-mine")
    await put_all(storage, [chain_event(f"{uid}-theirs", n) for n in range(1, 4)])
    await assert_refused(storage, cursor, f"{uid}-theirs")


async def test_cursor_from_another_tenant(storage: Storage, uid: str) -> None:
    cursor = await chain_cursor(storage, uid)
    await assert_refused(storage, cursor, uid, tenant="tenant-b")


async def test_cursor_from_another_time_range(storage: Storage, uid: str) -> None:
    """Same pattern, partition and tenant, but the cursor points outside the range asked for."""
    await put_all(storage, [scan_record(uid, at(m)) for m in range(6)])
    wide = await storage.query(
        PRODUCT_SCANS, {"product_id": uid, "start": at(0), "end": at(5)}, tenant=TENANT, first=1
    )
    assert wide.end_cursor is not None
    with tracing() as trace, pytest.raises(InvalidCursor):
        await storage.query(
            PRODUCT_SCANS,
            {"product_id": uid, "start": at(0), "end": at(2)},
            tenant=TENANT,
            after=wide.end_cursor,
        )
    assert trace.calls == []


async def test_cursor_from_another_deployment_key(
    storage: Storage, open_storage: OpenStorage, uid: str
) -> None:
    cursor = await chain_cursor(storage, uid)
    other = await open_storage(os.urandom(32))
    try:
        await assert_refused(other, cursor, uid)
    finally:
        await other.close()
