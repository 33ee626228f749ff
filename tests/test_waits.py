"""Tests wait on facts, not time: no test sleeps right after subscribing,
hoping the subscription is registered by then (``Gateway.wait_for_subscriptions``
asks the server instead)."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

TESTS = Path(__file__).parent


def _calls(statement: ast.stmt, name: str) -> bool:
    return any(
        isinstance(node, ast.Call)
        and name == getattr(node.func, "attr", getattr(node.func, "id", None))
        for node in ast.walk(statement)
    )


def _is_sleep(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Await)
        and ast.unparse(statement.value.value).startswith("asyncio.sleep(")
    )


def _sleeps_after_subscribing(source: str) -> list[int]:
    """Lines of an ``await asyncio.sleep(...)`` that directly follows, in the
    same block, a simple statement that calls ``subscribe`` (not as a task
    started to be seen waiting: that sleep lets the task reach its wait)."""
    simple = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for before, statement in itertools.pairwise(body):
            subscribes = _calls(before, "subscribe") and not _calls(before, "create_task")
            if isinstance(before, simple) and subscribes and _is_sleep(statement):
                found.append(statement.lineno)
    return found


def test_no_test_sleeps_to_wait_for_a_subscription() -> None:
    offenders = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in _sleeps_after_subscribing(path.read_text())
    ]
    assert offenders == [], "wait for the server's count, not a sleep"


def test_the_check_finds_a_planted_sleep() -> None:
    planted = (
        "async def test_x(gateway):\n"
        "    operation = await socket.subscribe(brand)\n"
        "    await asyncio.sleep(0.1)\n"
    )
    assert _sleeps_after_subscribing(planted) == [3]
    waited = planted.replace("asyncio.sleep(0.1)", "gateway.wait_for_subscriptions(1)")
    assert _sleeps_after_subscribing(waited) == []
