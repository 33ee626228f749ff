"""Group commit (storage/sqlite/_group.py): writes submitted in one turn of the
loop, or while the writer thread is busy, commit in one SQLite transaction,
each in its own savepoint, and each caller learns its own outcome only once
the group has committed. A group commits on the loop's thread when the write
lock is free (storage/sqlite/_inline_writer.py) and on the writer thread when
it is not. WAL checkpoints run on their own thread after commits
(storage/sqlite/_checkpoint.py)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from domain.errors import ConditionFailed, LimitExceeded, ServiceUnavailable
from storage import ItemAbsent, Key, Put, Update
from storage.limits import ITEM_MAX_BYTES
from storage.sqlite import SqliteDriver, _group, _inline_writer
from storage.sqlite._checkpoint import FALLBACK_PAGES
from storage.sqlite._writes import Outcome, Request, commit_group, try_commit_group


@pytest.fixture
def group_sizes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every group the writer thread commits."""
    sizes: list[int] = []

    def counted(connection: sqlite3.Connection, requests: Sequence[Request]) -> list[Outcome]:
        sizes.append(len(requests))
        return commit_group(connection, requests)

    monkeypatch.setattr(_group, "commit_group", counted)
    return sizes


@pytest.fixture
def loop_groups(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool, str]]:
    """Every group tried on the loop's thread: its size, whether it
    committed there (False: the lock was taken) and the thread's name."""
    groups: list[tuple[int, bool, str]] = []

    def counted(
        connection: sqlite3.Connection, requests: Sequence[Request]
    ) -> list[Outcome] | None:
        outcomes = try_commit_group(connection, requests)
        groups.append((len(requests), outcomes is not None, threading.current_thread().name))
        return outcomes

    monkeypatch.setattr(_inline_writer, "try_commit_group", counted)
    return groups


@pytest.fixture
def lock(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """Another connection to the file, to hold its write lock."""
    raw = sqlite3.connect(tmp_path / "proofgate.sqlite", isolation_level=None)
    yield raw
    raw.close()


def _driver(tmp_path: Path, **options: float) -> SqliteDriver:
    """A store without the TTL sweep: the sweep takes the write lock on the
    writer thread as the store opens, and a group tried on the loop's thread
    at that moment goes to the writer thread, which these tests count."""
    return SqliteDriver(tmp_path / "proofgate.sqlite", ttl_sweep_seconds=None, **options)


async def _queued_behind_the_lock(
    driver: SqliteDriver, lock: sqlite3.Connection, *writes: asyncio.Future[float]
) -> list[float | BaseException]:
    """Every write submitted while the file's write lock is held elsewhere,
    then the lock released."""
    lock.execute("BEGIN IMMEDIATE")
    tasks = [asyncio.ensure_future(write) for write in writes]
    await asyncio.sleep(0.05)
    assert not any(task.done() for task in tasks), "nothing settles while the lock is held"
    lock.execute("ROLLBACK")
    return list(await asyncio.gather(*tasks, return_exceptions=True))


async def test_writes_of_one_turn_commit_together_on_the_loops_thread(
    tmp_path: Path, group_sizes: list[int], loop_groups: list[tuple[int, bool, str]]
) -> None:
    driver = _driver(tmp_path, timeout=5)
    await driver.wait_ready()
    try:
        await driver.write(Put({"PK": "TAKEN", "SK": "META"}))
        loop_groups.clear()
        group_sizes.clear()

        outcomes = await asyncio.gather(
            driver.write(Put({"PK": "A", "SK": "META"})),
            driver.write(Put({"PK": "TAKEN", "SK": "META", "x": 1}, ItemAbsent())),
            driver.transact_write([Put({"PK": "B", "SK": "META"})]),
            return_exceptions=True,
        )

        assert loop_groups == [(3, True, threading.current_thread().name)]
        assert group_sizes == [], "the writer thread committed nothing"
        assert [type(o) for o in outcomes] == [float, ConditionFailed, float]
        for pk in ("A", "B"):
            assert (await driver.get_item(Key(pk, "META"), True))[0] is not None
        taken = (await driver.get_item(Key("TAKEN", "META"), True))[0]
        assert taken == {"PK": "TAKEN", "SK": "META"}, "the failed put changed nothing"
    finally:
        await driver.close()


async def test_writes_that_wait_for_the_writer_thread_commit_next_on_the_loops_thread(
    tmp_path: Path,
    lock: sqlite3.Connection,
    group_sizes: list[int],
    loop_groups: list[tuple[int, bool, str]],
) -> None:
    driver = _driver(tmp_path, timeout=5)
    await driver.wait_ready()
    try:
        lock.execute("BEGIN IMMEDIATE")
        first = asyncio.ensure_future(driver.write(Put({"PK": "FIRST", "SK": "META"})))
        for _ in range(100):  # until the loop's try, which finds the lock taken
            if loop_groups:
                break
            await asyncio.sleep(0)
        later = [driver.write(Put({"PK": f"LATER#{i}", "SK": "META"})) for i in range(3)]
        waiting = asyncio.gather(first, *later)
        lock.execute("ROLLBACK")

        assert await waiting == [1.0] * 4
        assert group_sizes == [1], "the writer thread waited for the lock for the first"
        assert [(size, committed) for size, committed, _ in loop_groups] == [(1, False), (3, True)]
    finally:
        await driver.close()


async def test_writes_waiting_for_the_writer_commit_together_each_with_its_own_outcome(
    tmp_path: Path, lock: sqlite3.Connection, group_sizes: list[int]
) -> None:
    driver = _driver(tmp_path, timeout=5)
    await driver.wait_ready()
    try:
        await driver.write(Put({"PK": "TAKEN", "SK": "META"}))
        await driver.write(Put({"PK": "COUNTER", "SK": "META", "n": 1}))
        await driver.write(Put({"PK": "FULL", "SK": "META", "pad": "x" * (ITEM_MAX_BYTES - 100)}))
        group_sizes.clear()
        outgrow = Update(Key("FULL", "META"), set={"more": "y" * 200})

        outcomes = await _queued_behind_the_lock(
            driver,
            lock,
            driver.write(Put({"PK": "FIRST", "SK": "META"})),
            driver.write(Put({"PK": "NEW", "SK": "META"})),
            driver.write(Put({"PK": "TAKEN", "SK": "META", "x": 1}, ItemAbsent())),
            driver.transact_write([Put({"PK": "HALF", "SK": "META"}), outgrow]),
            driver.transact_write([Update(Key("COUNTER", "META"), add={"n": 1})]),
        )

        assert group_sizes == [5], "the five of one turn waited for the lock together"
        assert [type(o) for o in outcomes] == [float, float, ConditionFailed, LimitExceeded, float]
        present = {pk: (await driver.get_item(Key(pk, "META"), True))[0] for pk in
                   ("FIRST", "NEW", "TAKEN", "HALF", "COUNTER")}  # fmt: skip
        assert present["FIRST"] is not None and present["NEW"] is not None
        assert present["TAKEN"] == {"PK": "TAKEN", "SK": "META"}, "the failed put changed nothing"
        assert present["HALF"] is None, "a failed transaction is rolled back to its savepoint"
        assert present["COUNTER"] is not None and present["COUNTER"]["n"] == 2
    finally:
        await driver.close()


async def test_a_group_that_cannot_take_the_lock_fails_every_write_and_stores_nothing(
    tmp_path: Path, lock: sqlite3.Connection, group_sizes: list[int]
) -> None:
    driver = _driver(tmp_path, timeout=0.02)
    await driver.wait_ready()
    try:
        lock.execute("BEGIN IMMEDIATE")
        writes = [driver.write(Put({"PK": f"P#{i}", "SK": "META"})) for i in range(4)]
        outcomes = await asyncio.gather(*writes, return_exceptions=True)
        lock.execute("ROLLBACK")

        assert len(group_sizes) < 4, "some writes shared a group"
        assert all(isinstance(o, ServiceUnavailable) for o in outcomes), outcomes
        for i in range(4):
            assert (await driver.get_item(Key(f"P#{i}", "META"), True))[0] is None
    finally:
        await driver.close()


def _autocheckpoint(connection: sqlite3.Connection) -> int:
    pages: int = connection.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    return pages


async def test_checkpoints_run_on_their_own_thread_once_writes_commit(tmp_path: Path) -> None:
    driver = _driver(tmp_path)
    await driver.wait_ready()
    try:
        assert driver.checkpointer is not None
        assert await driver._writer.call(_autocheckpoint) == FALLBACK_PAGES
        assert driver.checkpointer.checkpoints == 0, "an idle store checkpoints nothing"

        await driver.write(Put({"PK": "P#1", "SK": "META"}))
        deadline = time.monotonic() + 10
        while driver.checkpointer.checkpoints == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

        assert driver.checkpointer.checkpoints >= 1
    finally:
        await driver.close()


def _busy_timeout(connection: sqlite3.Connection) -> int:
    milliseconds: int = connection.execute("PRAGMA busy_timeout").fetchone()[0]
    return milliseconds


async def test_the_loops_commits_share_its_reads_connection_and_leave_reads_their_wait(
    tmp_path: Path, lock: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite drops a connection's page cache when another has committed
    since its last read, so the loop's reads and commits share a connection;
    the commit's try waits for no lock, the reads still wait up to the
    store's timeout."""
    used: list[tuple[sqlite3.Connection, int]] = []

    def recorded(
        connection: sqlite3.Connection, requests: Sequence[Request]
    ) -> list[Outcome] | None:
        used.append((connection, _busy_timeout(connection)))
        return try_commit_group(connection, requests)

    monkeypatch.setattr(_inline_writer, "try_commit_group", recorded)
    driver = _driver(tmp_path, timeout=5)
    await driver.wait_ready()
    try:
        await driver.write(Put({"PK": "A", "SK": "META"}))
        lock.execute("BEGIN IMMEDIATE")
        behind_the_lock = asyncio.ensure_future(driver.write(Put({"PK": "B", "SK": "META"})))
        for _ in range(100):  # until the loop's try, which finds the lock taken
            if len(used) == 2:
                break
            await asyncio.sleep(0)
        lock.execute("ROLLBACK")
        assert await behind_the_lock == 1.0

        assert driver._inline is not None
        reads = driver._inline.connection()
        assert [(connection is reads, wait) for connection, wait in used] == [(True, 0)] * 2
        assert _busy_timeout(reads) == 5000, "restored after a commit and after a refused try"
    finally:
        await driver.close()
