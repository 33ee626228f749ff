"""Tools run through the GraphQL execution path: trusted documents, limits
and access control apply to them as to any request over /graphql."""

from __future__ import annotations

from _asgi import codes
from _limits import serve
from _mcp import asgi_client, error_codes, structured

from api.settings.limits import Limits
from api.settings.operations import OperationSettings, TrustedDocuments

UNREGISTERED = "query Other { explore(first: 1) { edges { node { id } } } }"


async def test_tools_run_in_enforce_mode() -> None:
    """They are registered operations; the positive control is a document
    that is not, refused on /graphql by the same app."""
    operations = OperationSettings(trusted_documents=TrustedDocuments.ENFORCE)
    async with serve(operations=operations) as gateway:
        refused = await gateway.execute(UNREGISTERED)
        assert codes(refused) == ["PERSISTED_QUERY_NOT_ALLOWED"]
        brand_id, key = await gateway.brand()
        async with asgi_client(gateway.app, key) as client:
            result = await client.call_tool("list_brand_products", {"brandId": brand_id})
    assert structured(result)["brand"]["products"]["edges"] == []


async def test_limits_apply_to_tools() -> None:
    async with serve() as gateway:
        brand_id, key = await gateway.brand()
        async with asgi_client(gateway.app, key) as client:
            page = await client.call_tool("list_brand_products", {"brandId": brand_id, "first": 2})
            too_big = await client.call_tool(
                "list_brand_products", {"brandId": brand_id, "first": 101}
            )
    assert structured(page)["brand"]["products"]["pageInfo"]["hasNextPage"] is False
    assert error_codes(too_big) == ["BAD_USER_INPUT"]


async def test_a_tool_over_the_cost_budget_is_not_offered() -> None:
    """Checked at start-up at its largest variables, so no call of a tool
    can go over the budget: one that would is left out, as the explorer's
    examples are."""
    async with serve(Limits(max_cost=150)) as gateway:
        _, key = await gateway.brand()
        async with asgi_client(gateway.app, key) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
    assert "list_brand_products" in listed  # costs 102 at first: 100
    assert "list_brand_threats" not in listed  # costs 202


async def test_an_unknown_tool_is_a_tool_error() -> None:
    async with serve() as gateway, asgi_client(gateway.app) as client:
        result = await client.call_tool("drop_everything", {})
    assert error_codes(result) == ["NOT_FOUND"]


async def test_tools_are_listed_with_their_schemas_and_annotations() -> None:
    async with serve() as gateway:
        _, key = await gateway.brand()
        async with asgi_client(gateway.app, key) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        specs = gateway.app.state.mcp.tools
    assert set(tools) == {name for name, spec in specs.items()}
    for name, tool in tools.items():
        assert tool.input_schema == specs[name].input_schema
        assert tool.description == specs[name].description
    register = tools["register_product"].annotations
    assert (register.read_only_hint, register.destructive_hint, register.idempotent_hint) == (
        False,
        False,
        True,
    )
    assert tools["verify_code"].annotations.read_only_hint is True
    assert tools["verify_code"].annotations.destructive_hint is None
