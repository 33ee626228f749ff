"""Types implementing an interface carry Strawberry's ``is_type_of``; a plan
checks it itself (a class test) instead of leaving the operation to
graphql-core, and answers a resolver returning the wrong object exactly as
graphql-core does. A field returning the interface still falls back."""

from __future__ import annotations

import json
from typing import Any

import pytest
import strawberry
from _operation_context import Context

from api.graphql.execution import PlanCache, compiled_executor


@strawberry.interface
class Named:
    name: str


@strawberry.type
class Cat(Named):
    lives: int = 9


@strawberry.type
class Dog(Named):
    good: bool = True


@strawberry.type
class Plain:
    name: str


@strawberry.type
class Query:
    @strawberry.field
    def cat(self) -> Cat:
        return Cat(name="Tom")

    @strawberry.field
    def wrong(self) -> Cat | None:
        """A planted fault: an object of no Cat class where a Cat is declared."""
        return Plain(name="x")  # type: ignore[return-value]

    @strawberry.field
    def cats(self) -> list[Cat | None]:
        return [Cat(name="Tom"), Dog(name="Rex"), Plain(name="x")]  # type: ignore[list-item]

    @strawberry.field
    def named(self) -> Named:
        return Dog(name="Rex")


async def answer(query: str, *, compiled: bool) -> tuple[dict[str, Any], str | None]:
    executor = compiled_executor(PlanCache() if compiled else None)
    schema = strawberry.Schema(query=Query, types=[Dog], execution_context_class=executor)
    context = Context()
    result = await schema.execute(query, context_value=context)
    body = {"data": result.data, "errors": [e.formatted for e in result.errors or []]}
    return json.loads(json.dumps(body)), context.execution


@pytest.mark.parametrize(
    "query",
    [
        "{ cat { name lives } }",
        "{ wrong { name } }",
        "{ cats { name } }",
        "{ cat { name } wrong { lives } }",
    ],
)
async def test_types_with_is_type_of_compile_and_answer_alike(query: str) -> None:
    compiled, mode = await answer(query, compiled=True)
    core, _ = await answer(query, compiled=False)
    assert mode == "compiled"
    assert compiled == core


async def test_the_wrong_object_is_refused_at_its_field() -> None:
    """Strawberry's check admits the interface's classes too (a Dog is a
    Named); an object of neither is the error graphql-core gives."""
    body, _ = await answer("{ cats { name } }", compiled=True)
    assert body["data"] == {"cats": [{"name": "Tom"}, {"name": "Rex"}, None]}
    assert [(e["message"], e["path"]) for e in body["errors"]] == [
        ("Expected value of type 'Cat' but got: <Plain instance>.", ["cats", 2])
    ]


async def test_an_interface_field_falls_back_to_graphql_core() -> None:
    compiled, mode = await answer("{ named { name ... on Dog { good } } }", compiled=True)
    core, _ = await answer("{ named { name ... on Dog { good } } }", compiled=False)
    assert mode == "graphql-core"
    assert compiled == core == {"data": {"named": {"name": "Rex", "good": True}}, "errors": []}
