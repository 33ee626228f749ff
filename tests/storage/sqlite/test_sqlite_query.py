from __future__ import annotations

import sqlite3
import threading

import pytest

from storage.sqlite._query import STATEMENTS, prefix_successor
from storage.sqlite._reads import BATCH_STATEMENTS
from storage.sqlite._schema import DELETE, SELECT_ITEM, SELECT_SIZE, connect_writer


@pytest.fixture
def connection() -> sqlite3.Connection:
    return connect_writer(":memory:", 1.0, threading.Event())


def _plan(connection: sqlite3.Connection, sql: str) -> list[str]:
    return [
        row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}", ["x"] * sql.count("?"))
    ]


@pytest.mark.parametrize(
    "sql", [*STATEMENTS.values(), *BATCH_STATEMENTS.values(), SELECT_ITEM, SELECT_SIZE, DELETE]
)
def test_every_statement_is_a_b_tree_search(connection: sqlite3.Connection, sql: str) -> None:
    plan = _plan(connection, sql)
    searches = [step for step in plan if step.startswith("SEARCH items")]
    assert searches, plan
    assert not any(step.startswith("SCAN items") or "TEMP B-TREE" in step for step in plan), plan


def test_queries_never_use_like() -> None:
    assert not any("LIKE" in sql.upper() for sql in STATEMENTS.values())


@pytest.mark.parametrize(
    ("prefix", "successor"),
    [
        ("EVENT#", "EVENT$"),
        ("a\u00ff", "a\u0100"),
        ("a\ud7ff", "a\ue000"),
        ("a\uffff", "a\U00010000"),
        ("a\U0010ffff", "b"),
        ("\U0010ffff\U0010ffff", None),
        ("", None),
    ],
)
def test_prefix_successor_is_the_least_string_after_the_prefix(
    prefix: str, successor: str | None
) -> None:
    assert prefix_successor(prefix) == successor
