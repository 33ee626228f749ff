"""A resolver called by a plan gets an ``Info`` that answers every question
as the one Strawberry builds for graphql-core's executor does."""

from __future__ import annotations

from typing import Any

import pytest
import strawberry
from strawberry.types.info import Info

from api.graphql.execution import PlanCache, compiled_executor
from api.graphql.execution.lazy_info import lazy_info_class

seen: list[dict[str, Any]] = []


def _snapshot(info: Info) -> dict[str, Any]:
    return {
        "class": isinstance(info, Info),
        "context": id(info.context),
        "field_name": info.field_name,
        "python_name": info.python_name,
        "path": info.path.as_list(),
        "typename": info.path.typename,
        "return_type": str(info.return_type),
        "selected_fields": repr(info.selected_fields),
        "variable_values": info.variable_values,
        "root_value": info.root_value,
        "operation": info.operation.name and info.operation.name.value,
        "query": info.query,
        "schema": id(info.schema),
        "parent_type": str(info._raw_info.parent_type),
    }


@strawberry.type
class Leaf:
    name: str

    @strawberry.field
    def described(self, info: Info) -> str:
        seen.append(_snapshot(info))
        return f"{self.name} at {info.path.as_list()}"

    @strawberry.field
    def keyword_only(self, *, info: Info) -> str:
        seen.append(_snapshot(info))
        return info.field_name


@strawberry.type
class Query:
    @strawberry.field
    def leaves(self) -> list[Leaf]:
        return [Leaf(name="a"), Leaf(name="b")]


class Context:
    execution: str | None = None


async def _snapshots(compiled: bool, query: str, variables: dict[str, Any]) -> list[Any]:
    seen.clear()
    schema = strawberry.Schema(
        query=Query, execution_context_class=compiled_executor(PlanCache() if compiled else None)
    )
    context = Context()
    result = await schema.execute(query, variable_values=variables, context_value=context)
    assert not result.errors, result.errors
    assert context.execution == ("compiled" if compiled else "graphql-core")
    return [
        result.data,
        *(
            {**s, "context": s["context"] == id(context), "schema": s["schema"] == id(schema)}
            for s in seen
        ),
    ]


@pytest.mark.parametrize(
    "query",
    [
        "{ leaves { described keywordOnly } }",
        "query Named($skip: Boolean!) { all: leaves { d: described @skip(if: $skip) "
        "keywordOnly ...on Leaf { name } } }",
    ],
)
async def test_a_lazy_info_answers_as_strawberrys(query: str) -> None:
    variables = {"skip": False}
    compiled = await _snapshots(True, query, variables)
    assert compiled == await _snapshots(False, query, variables)
    assert len(compiled) == 5


def test_an_info_class_with_its_own_context_is_left_to_strawberry() -> None:
    class OwnContext(Info):
        @property
        def context(self) -> Any:
            return "elsewhere"

    assert lazy_info_class(OwnContext) is None
    assert lazy_info_class(Info) is not None
