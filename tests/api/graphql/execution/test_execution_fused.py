"""Scalar attributes written inline into a selection's function answer what
graphql-core answers, for every value the inline test takes and every one it
leaves to the field's completion: odd strings, values of another type, None
where a value is required, an attribute that raises, and the response budget
running out on an inline leaf."""

from __future__ import annotations

import gc
import json
import tracemalloc
import weakref
from enum import Enum
from typing import Any

import pytest
import strawberry
from _operation_context import Context

from api.graphql.execution import PlanCache, compiled_executor
from api.graphql.execution import executor as executor_module
from api.graphql.execution.cache import PLAN_BYTES_PER_FIELD
from api.graphql.execution.plan import OperationPlan, compile_operation

TEXTS: list[Any] = [
    "plain",
    'with "quote"',
    "back\\slash",
    "tab\there",
    "ünïcödé",
    "",
    123,
    True,
    {"not": "a string"},
    None,
]


@strawberry.enum
class Colour(Enum):
    RED = "red"
    GREEN = "green"


@strawberry.type
class Thing:
    text: str | None
    required: str
    identifier: strawberry.ID
    flag: bool | None
    colour: Colour | None
    broken: str | None
    fragile: str


class Source:
    """What a resolver returned: its fields are read as attributes, as a
    plan reads a Strawberry type's, and two of them raise."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    @property
    def broken(self) -> str:
        raise ValueError("the attribute could not be read")

    @property
    def fragile(self) -> str:
        raise ValueError("the required attribute could not be read")


def _sources() -> list[Source]:
    flags: list[Any] = [True, False, None, "yes", 1]
    colours: list[Any] = [Colour.RED, Colour.GREEN, None, "red", 7]
    return [
        Source(
            text=text,
            required=text,
            identifier=text,
            flag=flags[index % 5],
            colour=colours[index % 5],
        )
        for index, text in enumerate(TEXTS)
    ]


@strawberry.type
class Query:
    @strawberry.field
    def things(self) -> list[Thing | None]:
        return _sources()  # type: ignore[return-value]

    @strawberry.field
    def thing(self) -> Thing:
        return _sources()[0]  # type: ignore[return-value]


async def _answer(
    query: str, *, compiled: bool = True, max_bytes: int = 1 << 20
) -> tuple[str, Any]:
    executor = compiled_executor(PlanCache() if compiled else None, max_response_bytes=max_bytes)
    schema = strawberry.Schema(query=Query, execution_context_class=executor)
    context = Context()
    result = await schema.execute(query, context_value=context)
    body = {"data": result.data, "errors": [e.formatted for e in result.errors or []]}
    return json.dumps(body), context.execution


async def _agree(query: str, max_bytes: int = 1 << 20) -> str:
    compiled, mode = await _answer(query, compiled=True, max_bytes=max_bytes)
    core, _ = await _answer(query, compiled=False, max_bytes=max_bytes)
    assert mode == "compiled"
    assert compiled == core
    return compiled


@pytest.mark.parametrize(
    "field",
    ["text", "required", "identifier", "flag", "colour", "broken", "fragile", "text flag colour"],
)
async def test_every_kind_of_value_answers_alike(field: str) -> None:
    answer = json.loads(await _agree(f"{{ things {{ {field} __typename }} }}"))
    assert len(answer["data"]["things"]) == len(TEXTS)


async def test_an_attribute_that_raises_is_a_field_error_alike() -> None:
    answer = json.loads(await _agree("{ things { broken fragile } }"))
    assert all(thing is None for thing in answer["data"]["things"])
    assert {error["message"] for error in answer["errors"]} == {
        "the required attribute could not be read",
        "the attribute could not be read",
    }


async def test_values_left_to_completion_are_coerced_or_refused_alike() -> None:
    answer = json.loads(await _agree("{ things { required } }"))
    messages = [error["message"] for error in answer["errors"]]
    # None where a String! is required nulls the item, and so does a dict.
    assert any("non-nullable" in message for message in messages)
    assert any("String cannot represent" in message for message in messages)
    assert answer["data"]["things"][6:8] == [{"required": "123"}, {"required": "true"}]


@pytest.mark.parametrize(
    ("max_bytes", "stops_at"),
    [(20, "text"), (40, "required"), (60, "identifier"), (70, None)],
)
async def test_the_budget_runs_out_on_the_same_field(max_bytes: int, stops_at: str | None) -> None:
    answer = json.loads(await _agree("{ thing { text required identifier } }", max_bytes))
    if stops_at is None:
        assert answer["errors"] == []
    else:
        assert answer["data"] is None
        assert [error["path"] for error in answer["errors"]] == [["thing", stops_at]]


async def _smallest_budget(query: str, *, compiled: bool) -> int:
    """The fewest response bytes the query answers within, by bisection."""
    low, high = 0, 1 << 16
    while low < high:
        middle = (low + high) // 2
        body, _ = await _answer(query, compiled=compiled, max_bytes=middle)
        if "maxResponseBytes" in body:
            low = middle + 1
        else:
            high = middle
    return low


@pytest.mark.parametrize("fields", ["text required identifier", "flag colour __typename"])
async def test_both_executors_count_every_byte_alike(fields: str) -> None:
    """Each inline kind's count equals the one graphql-core's completion
    charges, to the byte: both need the same budget to answer."""
    query = f"{{ things {{ {fields} }} }}"
    smallest = await _smallest_budget(query, compiled=True)
    assert smallest == await _smallest_budget(query, compiled=False)
    over = json.loads(await _agree(query, smallest - 1))
    assert over["data"] is None


_FRAMES = 200
"""Deep enough that every allocation of a compile still has this file's frame."""


async def test_a_plan_stays_within_the_caches_estimate_per_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Generated functions are larger than closures; the plan cache charges
    each plan ``PLAN_BYTES_PER_FIELD`` per field, which must cover them."""
    sizes: list[tuple[int, int]] = []

    def measured(executor: Any, **lanes: bool) -> OperationPlan:
        # Only what this call allocated and keeps: tracemalloc traces every
        # thread (a store's writer, moto's server), so the process's traced
        # total also counts what they allocate meanwhile; filtered to the
        # allocations made under this frame, it counts the plan's alone.
        tracemalloc.start(_FRAMES)
        try:
            plan = compile_operation(executor, **lanes)
            under_this_call = tracemalloc.Filter(True, __file__, all_frames=True)
            kept = tracemalloc.take_snapshot().filter_traces([under_this_call])
            sizes.append((sum(stat.size for stat in kept.statistics("filename")), plan.fields))
        finally:
            tracemalloc.stop()
        return plan

    monkeypatch.setattr(executor_module, "compile_operation", measured)
    selection = "text required identifier flag colour __typename"
    await _answer("{ " + " ".join(f"a{n}: things {{ {selection} }}" for n in range(40)) + " }")
    [(size, fields)] = sizes
    assert fields == 40 * 7
    assert size <= fields * PLAN_BYTES_PER_FIELD


async def test_an_evicted_plan_is_freed_without_the_garbage_collector() -> None:
    """A plan holds its document's nodes, and so its text: left in a cycle,
    an evicted plan would hold it until a full collection, past the cache's
    byte budget. With the collector off, dropping the cache's entry frees it."""
    cache = PlanCache(max_items=1)
    schema = strawberry.Schema(query=Query, execution_context_class=compiled_executor(cache))
    gc.collect()
    gc.disable()
    try:
        result = await schema.execute("{ thing { text flag colour __typename } }")
        assert result.errors is None
        [entry] = cache._entries.values()
        [plan] = entry.plans.values()
        assert plan is not None
        [selection] = [
            cell.cell_contents
            for cell in plan.run.__closure__ or ()
            if getattr(cell.cell_contents, "__code__", None) is not None
            and cell.cell_contents.__code__.co_filename == "<compiled selection>"
        ]
        freed = weakref.ref(selection)
        del entry, plan, selection
        result = await schema.execute("{ thing { required } }")  # evicts the first
        assert result.errors is None
        assert freed() is None
    finally:
        gc.enable()
