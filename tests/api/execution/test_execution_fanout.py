"""One event to many subscribers of one operation executes once per visibility."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import strawberry
from strawberry.extensions import ParserCache

from api.execution import PlanCache, compiled_executor

resolved: list[str] = []


@strawberry.type
class Alert:
    id: str

    @strawberry.field
    def detail(self) -> str:
        resolved.append(self.id)
        return f"detail of {self.id}"


EVENT = Alert(id="a1")


@strawberry.type
class Query:
    ping: str = "pong"


@strawberry.type
class Subscription:
    @strawberry.subscription
    async def alerts(self) -> AsyncGenerator[Alert, None]:
        yield EVENT


@dataclass
class Principal:
    role: str
    brand_id: str | None


@dataclass
class Context:
    principal: Principal
    execution: str | None = None


def _schema() -> tuple[strawberry.Schema, Any]:
    executor = compiled_executor(PlanCache())
    schema = strawberry.Schema(
        query=Query,
        subscription=Subscription,
        execution_context_class=executor,
        # The gateway's parse cache hands every subscriber the same document.
        extensions=[lambda: ParserCache(maxsize=10)],
    )
    return schema, executor


async def _first(schema: strawberry.Schema, context: Context) -> Any:
    stream = await schema.subscribe("subscription { alerts { id detail } }", context_value=context)
    async for result in stream:  # type: ignore[union-attr]
        await stream.aclose()  # type: ignore[union-attr]
        return result
    raise AssertionError("no event")


async def test_subscribers_who_see_the_same_share_one_execution() -> None:
    schema, executor = _schema()
    resolved.clear()
    brand = Principal("BRAND", "b1")
    results = [await _first(schema, Context(brand)) for _ in range(3)]
    assert [r.data for r in results] == [{"alerts": {"id": "a1", "detail": "detail of a1"}}] * 3
    assert resolved == ["a1"]
    assert (executor.events.executed, executor.events.shared) == (1, 2)
    assert results[0] is not results[1], "each subscriber gets its own result"


async def test_another_visibility_executes_again() -> None:
    schema, executor = _schema()
    resolved.clear()
    await _first(schema, Context(Principal("BRAND", "b1")))
    await _first(schema, Context(Principal("PARTNER", "b1")))
    await _first(schema, Context(Principal("BRAND", "b2")))
    assert resolved == ["a1", "a1", "a1"]
    assert executor.events.executed == 3
