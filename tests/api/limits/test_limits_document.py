"""Depth, aliases, tokens, introspection and suggestions, over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from _asgi import answer, codes
from _limits import Client, serve

from api.limits import document_cache
from api.settings.limits import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS, Limits

# A path that can nest as deep as a test wants and reads nothing: explore(first: 0)
# is an empty page, so below it no resolver runs.
_CYCLE = ("brand", "products(first: 1)", "edges", "node")


def nested(levels: int) -> str:
    """An operation whose deepest field is ``levels`` fields from the top."""
    path = ["explore(first: 0)", "edges", "node"]
    while len(path) < levels - 1:
        path.append(_CYCLE[(len(path) - 3) % len(_CYCLE)])
    leaf = "id" if path[-1] in ("node", "brand") else "__typename"
    query = leaf
    for field in reversed(path):
        query = f"{field} {{ {query} }}"
    return "{ " + query + " }"


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[Client]:
    async with serve() as client:
        yield client


@pytest.fixture(scope="module")
async def closed() -> AsyncIterator[Client]:
    async with serve(Limits(introspection=False, suggestions=False)) as client:
        yield client


async def test_depth_counts_levels_below_the_root_field(client: Client) -> None:
    under = await client.execute(nested(MAX_DEPTH + 1))
    assert answer(under) == {"data": {"explore": {"edges": []}}}
    over = await client.execute(nested(MAX_DEPTH + 2))
    assert over["data"] is None
    assert codes(over) == ["QUERY_TOO_COMPLEX"]
    assert over["errors"][0]["extensions"]["maxDepth"] == MAX_DEPTH


def aliased(count: int) -> str:
    return "{ " + " ".join(f"a{i}: viewer {{ role }}" for i in range(count)) + " }"


async def test_aliases(client: Client) -> None:
    under = await client.execute(aliased(MAX_ALIASES))
    assert len(under["data"]) == MAX_ALIASES
    over = await client.execute(aliased(MAX_ALIASES + 1))
    assert codes(over) == ["QUERY_TOO_COMPLEX"]
    assert over["errors"][0]["extensions"]["maxAliases"] == MAX_ALIASES


def tokens(count: int) -> str:
    """``{ __typename }`` and comments: graphql-core counts comments as tokens."""
    return "{ __typename }" + "\n#" * (count - 3)


async def test_tokens(client: Client) -> None:
    assert answer(await client.execute(tokens(MAX_TOKENS))) == {"data": {"__typename": "Query"}}
    over = await client.execute(tokens(MAX_TOKENS + 1))
    assert codes(over) == ["QUERY_TOO_COMPLEX"]
    assert over["errors"][0]["extensions"]["maxTokens"] == MAX_TOKENS


async def test_a_document_too_costly_to_validate_is_too_complex(client: Client) -> None:
    """graphql-core aborts validation past its comparison budget; the
    client learns the document is too complex, not that it is wrong."""
    body = await client.execute("{ " + "__typename " * 1900 + "}")
    assert codes(body) == ["QUERY_TOO_COMPLEX"]


async def test_syntax_errors_carry_a_code(client: Client) -> None:
    assert codes(await client.execute("{ viewer { role ")) == ["BAD_USER_INPUT"]


async def test_limits_come_from_settings() -> None:
    async with serve(Limits(max_depth=3, max_aliases=1, max_tokens=50)) as client:
        assert codes(await client.execute(nested(5))) == ["QUERY_TOO_COMPLEX"]
        assert codes(await client.execute(aliased(2))) == ["QUERY_TOO_COMPLEX"]
        assert codes(await client.execute(tokens(51))) == ["QUERY_TOO_COMPLEX"]
        assert "errors" not in await client.execute(nested(4))


INTROSPECTION = "{ __schema { queryType { name } } }"


async def test_introspection_on_by_default(client: Client) -> None:
    body = await client.execute(INTROSPECTION)
    assert answer(body) == {"data": {"__schema": {"queryType": {"name": "Query"}}}}


async def test_introspection_off(closed: Client) -> None:
    body = await closed.execute(INTROSPECTION)
    assert body["data"] is None
    assert set(codes(body)) == {"BAD_USER_INPUT"}
    assert "introspection" in body["errors"][0]["message"]
    type_body = await closed.execute('{ __type(name: "Brand") { name } }')
    assert set(codes(type_body)) == {"BAD_USER_INPUT"}
    assert answer(await closed.execute("{ __typename }")) == {"data": {"__typename": "Query"}}


MISSPELT = [
    ("{ helth { status } }", None),
    ("{ explore(frist: 1) { edges { node { id } } } }", None),
    (
        "mutation($input: RegisterBrandInput!) { registerBrand(input: $input) { apiKey } }",
        {"input": {"name": "A", "domain": "a.example.com", "plan": "FRE"}},
    ),
]


@pytest.mark.parametrize(("query", "variables"), MISSPELT, ids=["field", "argument", "enum"])
async def test_suggestions(
    client: Client, closed: Client, query: str, variables: dict[str, object] | None
) -> None:
    shown = await client.execute(query, variables)
    assert "Did you mean" in shown["errors"][0]["message"]
    hidden = await closed.execute(query, variables)
    assert codes(hidden) == ["BAD_USER_INPUT"]
    message = hidden["errors"][0]["message"]
    assert "Did you mean" not in message
    assert message == shown["errors"][0]["message"].split(" Did you mean")[0]


async def test_a_repeated_document_is_validated_once(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit rules are built once per schema, so the document cache, keyed
    by the rules, recognises the document the second time."""
    validated: list[object] = []
    real = document_cache.validate_document

    def counting(*args: Any) -> Any:
        validated.append(args[1])
        return real(*args)

    monkeypatch.setattr(document_cache, "validate_document", counting)
    query = "{ viewer { role } health { status } }"
    await client.execute(query)
    await client.execute(query)
    assert len(validated) == 1
