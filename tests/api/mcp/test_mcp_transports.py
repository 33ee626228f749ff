"""The SDK's client lists and calls every default tool over Streamable HTTP
(``/mcp`` of a ``proofgate serve`` process) and over stdio (``proofgate
mcp``), both on one SQLite file, as a gateway and a desktop agent share it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from _asgi import ADMIN_KEY, environment
from _mcp import error_codes, http_client, stdio_client, structured
from mcp import Client

from tests._support.ports import free_port, serving

pytestmark = pytest.mark.slow

PROOFGATE = str(Path(sys.executable).with_name("proofgate"))
DEFAULT_TOOLS = {
    "verify_code",
    "lookup_product",
    "list_brand_products",
    "list_brand_threats",
    "get_brand_ledger",
    "resolve_threat",
    "register_product",
}
REGISTER_BRAND = """mutation($input: RegisterBrandInput!) {
  registerBrand(input: $input) { apiKey brand { id } }
}"""
RECALL = """mutation($id: ID!) { recallProduct(productId: $id, reason: "Lead paint") { status } }"""
SCAN = """mutation($code: String!) { verifyProduct(code: $code) { scanCount } }"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    data_dir = tmp_path_factory.mktemp("mcp")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PROOFGATE_")}
    return clean | environment(data_dir, PROOFGATE_SQLITE_PATH=str(data_dir / "pg.db"))


@pytest.fixture(scope="module")
def server(store: dict[str, str]) -> Iterator[str]:
    port = free_port()
    env = store | {"PROOFGATE_PORT": str(port)}
    with serving([PROOFGATE, "serve"], port, env=env) as url:
        yield url


async def graphql(url: str, query: str, variables: dict[str, Any], key: str) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            f"{url}/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {key}"},
        )
    body: dict[str, Any] = response.json()
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


async def new_brand(url: str) -> tuple[str, str]:
    domain = f"{uuid.uuid4().hex[:8]}.example.com"
    brand_input = {"name": "Agent Brand", "domain": domain, "plan": "FREE"}
    payload = (await graphql(url, REGISTER_BRAND, {"input": brand_input}, ADMIN_KEY))[
        "registerBrand"
    ]
    return payload["brand"]["id"], payload["apiKey"]


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return structured(await client.call_tool(tool, arguments))


async def every_default_tool(client: Client, url: str, brand_id: str, key: str) -> None:
    assert {t.name for t in (await client.list_tools()).tools} == DEFAULT_TOOLS
    registration = {"input": {"brandId": brand_id, "name": "Agent Product"}}
    missing_key = await client.call_tool("register_product", registration)
    assert error_codes(missing_key) == ["BAD_USER_INPUT"]
    registration["idempotencyKey"] = "agent-1"
    product = (await call(client, "register_product", registration))["registerProduct"]
    retried = (await call(client, "register_product", registration))["registerProduct"]
    assert retried["id"] == product["id"]
    code = product["verificationCode"]
    verdict = (await call(client, "verify_code", {"code": code}))["verification"]
    assert (verdict["authentic"], verdict["result"], verdict["scanCount"]) == (
        True,
        "AUTHENTIC",
        0,
    )
    looked_up = (await call(client, "lookup_product", {"code": code}))["productByCode"]
    assert looked_up["id"] == product["id"]
    assert looked_up["provenance"]["pageInfo"]["hasNextPage"] is False
    await _records_no_scan(client, url, code)
    listed = (await call(client, "list_brand_products", {"brandId": brand_id}))["brand"]
    assert [e["node"]["id"] for e in listed["products"]["edges"]] == [product["id"]]
    ledger = (await call(client, "get_brand_ledger", {"brandId": brand_id}))["brand"]["ledger"]
    credit = next(b for b in ledger["balances"] if b["currency"] == "CREDIT")
    assert Decimal(credit["available"]) == Decimal("9")  # 10 granted, one fee, retry free
    await _resolves_a_threat(client, url, brand_id, product["id"], key)


async def _records_no_scan(client: Client, url: str, code: str) -> None:
    """verify_code twice recorded nothing; the positive control: one
    verifyProduct over GraphQL is counted, and the tool sees it."""
    scanned = await graphql(url, SCAN, {"code": code}, ADMIN_KEY)
    assert scanned["verifyProduct"]["scanCount"] == 1
    verdict = (await call(client, "verify_code", {"code": code}))["verification"]
    assert verdict["scanCount"] == 1


async def _resolves_a_threat(
    client: Client, url: str, brand_id: str, product_id: str, key: str
) -> None:
    await graphql(url, RECALL, {"id": product_id}, key)
    edges: list[Any] = []
    for _ in range(300):
        found = await call(client, "list_brand_threats", {"brandId": brand_id})
        edges = found["brand"]["threats"]["edges"]
        if edges:
            break
        await asyncio.sleep(0.05)
    assert [e["node"]["type"] for e in edges] == ["PRODUCT_RECALL"]
    threat = edges[0]["node"]["id"]
    for _ in range(2):  # idempotent: the second changes nothing
        resolved = (await call(client, "resolve_threat", {"id": threat}))["resolveThreat"]
        assert resolved["resolved"] is True
    after = (await call(client, "list_brand_threats", {"brandId": brand_id}))["brand"]
    assert after["stats"] == {"threatCount": 1, "openThreatCount": 0}


async def test_every_default_tool_over_http(server: str) -> None:
    brand_id, key = await new_brand(server)
    async with http_client(server) as anonymous:
        public = {t.name for t in (await anonymous.list_tools()).tools}
    assert public == {"verify_code", "lookup_product"}
    async with http_client(server, key) as client:
        await every_default_tool(client, server, brand_id, key)


async def test_every_default_tool_over_stdio(server: str, store: dict[str, str]) -> None:
    brand_id, key = await new_brand(server)
    async with stdio_client(PROOFGATE, store) as anonymous:
        public = {t.name for t in (await anonymous.list_tools()).tools}
    assert public == {"verify_code", "lookup_product"}
    async with stdio_client(PROOFGATE, store | {"PROOFGATE_MCP_KEY": key}) as client:
        await every_default_tool(client, server, brand_id, key)


def test_stdio_with_an_unknown_key_stops_with_one_line(store: dict[str, str]) -> None:
    """Over stdio no request can be refused with a 401; the process refuses
    to start instead (the anonymous stdio agent above is the control)."""
    stopped = subprocess.run(
        [PROOFGATE, "mcp"],
        env=store | {"PROOFGATE_MCP_KEY": f"pg_{uuid.uuid4().hex}"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (stopped.returncode, stopped.stdout) == (1, "")
    assert stopped.stderr.splitlines() == [
        "proofgate: error: Invalid PROOFGATE_MCP_KEY: Invalid or revoked API key",
        "proofgate: hint: Set it to a live API key, or leave it unset for the public tools only.",
    ]
