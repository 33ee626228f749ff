"""Registered queries over GET with the response cache: ``ETag``, ``304`` on
``If-None-Match``, and a ``Cache-Control`` by caller, over real HTTP to a
``proofgate serve`` process (docs/design.md, Response cache)."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from _asgi import ADMIN_KEY as ASGI_ADMIN_KEY
from _asgi import serving
from _live import ADMIN_KEY, Gateway

from api.graphql.response_cache import ResponseAnswers

OPERATIONS = """
query ByCode($code: String!) { productByCode(code: $code) { id name status } }
query ProductOne($id: ID!) { product(id: $id) { id name status } }
"""
DOCUMENT_ID = "sha256:" + hashlib.sha256(OPERATIONS.encode()).hexdigest()
PUBLIC = "public, max-age=0, s-maxage=0, must-revalidate"
PRIVATE = "private, no-cache"
REGISTER_BRAND = """mutation($input: RegisterBrandInput!) {
    registerBrand(input: $input) { apiKey brand { id } }
}"""
REGISTER_PRODUCT = """mutation($input: RegisterProductInput!) {
    registerProduct(input: $input) { id verificationCode }
}"""
RECALL = """mutation($id: ID!) { recallProduct(productId: $id, reason: "Recalled") { id } }"""


def environment(directory: Path) -> dict[str, str]:
    (directory / "cached.graphql").write_text(OPERATIONS)
    return {
        "PROOFGATE_OPERATIONS_DIR": str(directory),
        "PROOFGATE_CACHE": "on",
        "PROOFGATE_RESPONSE_CACHE": "on",
        "PROOFGATE_RESPONSE_CACHE_OPERATIONS": "ByCode,ProductOne",
    }


async def _post(http: httpx.AsyncClient, query: str, variables: Any, key: str) -> Any:
    response = await http.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"authorization": f"Bearer {key}"},
    )
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


async def _get(
    http: httpx.AsyncClient, name: str, variables: Any, key: str | None, etag: str | None = None
) -> httpx.Response:
    headers = {} if key is None else {"authorization": f"Bearer {key}"}
    if etag is not None:
        headers["if-none-match"] = etag
    params = {"documentId": DOCUMENT_ID, "operationName": name, "variables": json.dumps(variables)}
    return await http.get("/graphql", params=params, headers=headers)


def _expect(problems: list[str], what: str, response: httpx.Response, status: int, control: str):
    seen = (response.status_code, response.headers.get("cache-control"))
    if seen != (status, control) or "Authorization" not in response.headers.get("vary", ""):
        problems.append(f"{what}: {seen} vary={response.headers.get('vary')}")
    if status == 304 and response.content:
        problems.append(f"{what}: a 304 with a body")


async def etag_problems(http: httpx.AsyncClient, admin_key: str) -> list[str]:
    """A public and a keyed answer, each asked again with its ``ETag`` before
    and after a write changes it; what went wrong."""
    domain = f"{uuid.uuid4().hex[:8]}.example.com"
    brand = await _post(http, REGISTER_BRAND, {"input": {"name": "E", "domain": domain}}, admin_key)
    brand_id, key = brand["registerBrand"]["brand"]["id"], brand["registerBrand"]["apiKey"]
    new = {"input": {"brandId": brand_id, "name": "Tagged"}}
    product = (await _post(http, REGISTER_PRODUCT, new, key))["registerProduct"]
    public = ("ByCode", {"code": product["verificationCode"]}, None, PUBLIC)
    private = ("ProductOne", {"id": product["id"]}, key, PRIVATE)
    problems: list[str] = []
    etags = {}
    for name, variables, caller, control in (public, private):
        first = await _get(http, name, variables, caller)
        _expect(problems, f"{name} first", first, 200, control)
        etag = etags[name] = first.headers.get("etag", "")
        again = await _get(http, name, variables, caller, etag)
        _expect(problems, f"{name} again", again, 304, control)
        if again.headers.get("etag") != etag:
            problems.append(f"{name}: the 304 carries another ETag")
    await _post(http, RECALL, {"id": product["id"]}, key)
    for name, variables, caller, control in (public, private):
        after = await _get(http, name, variables, caller, etags[name])
        _expect(problems, f"{name} after the write", after, 200, control)
        if after.status_code == 200:
            status = next(iter(after.json()["data"].values()))["status"]
            if status != "RECALLED" or after.headers.get("etag") == etags[name]:
                problems.append(f"{name} after the write: {status}, same ETag")
    return problems


@pytest.mark.slow
async def test_etag_and_304_over_real_http(tmp_path: Path) -> None:
    gateway = await Gateway(tmp_path, **environment(tmp_path)).start()
    try:
        assert await etag_problems(gateway.client, ADMIN_KEY) == []
    finally:
        await gateway.stop()


@contextmanager
def planted(monkeypatch: pytest.MonkeyPatch, fault: str) -> Iterator[None]:
    if fault == "always not modified":
        monkeypatch.setattr(
            "api.graphql.response_cache.http.not_modified", lambda if_none_match, etag: True
        )
    else:  # a keyed answer made public

        def headers(self: ResponseAnswers, etag: str, principal: Any) -> Any:
            control = b"public, max-age=0, s-maxage=0, must-revalidate"
            return [
                (b"etag", etag.encode()),
                (b"cache-control", control),
                (b"vary", b"Authorization"),
            ]

        monkeypatch.setattr(ResponseAnswers, "headers", headers)
    yield


@pytest.mark.parametrize("fault", ["always not modified", "keyed answer public"])
async def test_each_planted_http_fault_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """In this process (a fault cannot be planted in a server process): the
    same exchanges through the ASGI app."""
    async with serving(tmp_path, **environment(tmp_path)) as client:
        assert await etag_problems(client.http, ASGI_ADMIN_KEY) == []
        with planted(monkeypatch, fault):
            assert await etag_problems(client.http, ASGI_ADMIN_KEY) != []
