"""One event to many subscribers of one operation executes once per visibility."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import strawberry
from strawberry.extensions import ParserCache

from api.graphql.execution import PlanCache, compiled_executor

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


def _schema(subscription: type = Subscription) -> tuple[strawberry.Schema, Any]:
    executor = compiled_executor(PlanCache())
    schema = strawberry.Schema(
        query=Query,
        subscription=subscription,
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


# --- what subscribers share, and what each keeps of its own -----------------------


@strawberry.type
class Seen:
    id: str

    @strawberry.field
    def seen_by(self, info: strawberry.Info) -> str:
        """A planted per-subscriber difference: what the viewer's role sees."""
        principal: Principal = info.context.principal
        return f"{principal.role}/{principal.brand_id}"


SEEN = Seen(id="s1")


@strawberry.type
class Watching:
    @strawberry.subscription
    async def seen(self, tag: str = "") -> AsyncGenerator[Seen, None]:
        yield SEEN


@dataclass
class SocketLike(Context):
    """Copies itself per operation, as ``SocketContext.for_operation`` does."""

    copies: list[SocketLike] | None = None

    def for_operation(self) -> SocketLike:
        copy = SocketLike(self.principal, copies=self.copies)
        assert self.copies is not None
        self.copies.append(copy)
        return copy


async def _seen(schema: strawberry.Schema, context: Context, tag: str = "") -> Any:
    stream = await schema.subscribe(
        "subscription($tag: String!) { seen(tag: $tag) { id seenBy } }",
        context_value=context,
        variable_values={"tag": tag},
    )
    async for result in stream:  # type: ignore[union-attr]
        await stream.aclose()  # type: ignore[union-attr]
        return result
    raise AssertionError("no event")


async def test_a_planted_difference_is_never_shared_across_visibilities() -> None:
    schema, executor = _schema(Watching)
    viewers = [
        Principal("BRAND", "b1"),
        Principal("BRAND", "b1"),
        Principal("PARTNER", "b1"),
        Principal("BRAND", "b2"),
        Principal("BRAND", "b1"),
    ]
    results = [await _seen(schema, Context(viewer)) for viewer in viewers]
    assert [r.data["seen"]["seenBy"] for r in results] == [
        "BRAND/b1",
        "BRAND/b1",
        "PARTNER/b1",
        "BRAND/b2",
        "BRAND/b1",
    ]
    assert (executor.events.executed, executor.events.shared) == (3, 2)
    assert results[0].data is results[1].data is results[4].data, "one answer, shared"
    assert results[2].data is not results[0].data


async def test_other_variables_are_not_shared() -> None:
    schema, executor = _schema(Watching)
    brand = Principal("BRAND", "b1")
    await _seen(schema, Context(brand), tag="a")
    await _seen(schema, Context(brand), tag="b")
    await _seen(schema, Context(brand), tag="a")
    assert (executor.events.executed, executor.events.shared) == (2, 1)


async def test_only_the_execution_that_runs_copies_its_context() -> None:
    """Fresh DataLoaders for every execution (a copy of the socket's
    context), and none made for subscribers answered from it."""
    schema, _ = _schema(Watching)
    copies: list[SocketLike] = []
    contexts = [SocketLike(Principal("BRAND", "b1"), copies=copies) for _ in range(4)]
    results = [await _seen(schema, context) for context in contexts]
    assert len(copies) == 1
    assert copies[0] not in contexts
    assert copies[0].execution == "compiled"
    assert {r.data["seen"]["seenBy"] for r in results} == {"BRAND/b1"}


async def test_an_events_executor_copy_is_graphql_cores_copy() -> None:
    from copy import copy

    schema, executor = _schema(Watching)
    built: list[Any] = []
    original = executor.build_per_event_executor

    def spy(self: Any, payload: Any) -> Any:
        built.append(self)
        return original(self, payload)

    executor.build_per_event_executor = spy
    await _seen(schema, Context(Principal("BRAND", "b1")))
    base = built[0]
    event = Seen(id="other")
    ours, theirs = original(base, event), copy(base)
    theirs.root_value = event
    assert type(ours) is type(theirs)
    assert vars(ours).keys() == vars(theirs).keys()
    for name, value in vars(theirs).items():
        if name != "collected_errors":
            assert vars(ours)[name] is value, name
    assert ours.collected_errors is not base.collected_errors
    assert not ours.collected_errors.errors
