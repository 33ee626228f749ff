"""Relay's own compiler against ``schema.graphql``: frontend operations with
``@connection``, ``@refetchable`` and fragments compile, their persisted
output (``persisted_queries.json``, MD5 ids) loads into the registry, and
each refetch query Relay generated runs by its id alone under ``enforce``.
relay-runtime, with README's ``getDataID``, joins a page fetched through
``node(id:)`` to the one before it against a served gateway.

relay-compiler and relay-runtime are pinned by package-lock.json here and installed with
``npm ci`` on first use; without npm the tests skip, saying so."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.app import create_app
from api.graphql.schema import schema
from api.operations.registry import load_registry
from api.settings.gateway import Settings
from api.settings.limits import Limits
from api.settings.operations import OperationSettings, TrustedDocuments
from tests.api._live import ADMIN_KEY as LIVE_ADMIN_KEY
from tests.api._live import Gateway

PROJECT = Path(__file__).resolve().parent
ROOT = PROJECT.parents[2]
COMPILER = PROJECT / "node_modules" / ".bin" / "relay-compiler"
ADMIN_KEY = "relay-test-admin-key"
FRONTEND_OPERATIONS = {
    "BrandPageQuery",
    "BrandProductsPaginationQuery",
    "GalleryQuery",
    "GalleryPaginationQuery",
    "NodeLookupQuery",
    "ProductRowRefetchQuery",
}

pytestmark = pytest.mark.xdist_group("relay-compiler")


@pytest.fixture(scope="session")
def relay_compiler() -> Path:
    if not COMPILER.exists() or not (PROJECT / "node_modules" / "relay-runtime").exists():
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            pytest.skip("node and npm are not installed: the Relay compiler tests need them")
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=PROJECT,
            check=True,
            timeout=300,
        )
    return COMPILER


def compile_project(
    compiler: Path, where: Path, schema_text: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The frontend project in ``where``, compiled against ``schema.graphql``
    (or ``schema_text``); artifacts and persisted ids land in ``where``."""
    shutil.copytree(PROJECT / "src", where / "src")
    (where / "__generated__").mkdir()
    (where / "persisted").mkdir()
    (where / "persisted" / "persisted_queries.json").write_text("{}")
    schema_path = ROOT / "schema.graphql"
    if schema_text is not None:
        schema_path = where / "schema.graphql"
        schema_path.write_text(schema_text)
    template = (PROJECT / "relay.config.template.json").read_text()
    config = json.loads(template.replace("SCHEMA", str(schema_path)))
    config["persistConfig"]["file"] = "./persisted/persisted_queries.json"
    (where / "relay.config.json").write_text(json.dumps(config))
    (where / "node_modules").symlink_to(PROJECT / "node_modules")
    return subprocess.run(
        [str(compiler)], cwd=where, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def compiled(relay_compiler: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("relay")
    done = compile_project(relay_compiler, where)
    assert done.returncode == 0, done.stdout + done.stderr
    return where / "persisted"


def operation_name(text: str) -> str:
    """``query Name(...`` or ``query Name {``: Relay puts the operation first."""
    return text.split("(")[0].split("{")[0].split()[1]


def persisted(folder: Path) -> dict[str, str]:
    loaded: dict[str, str] = json.loads((folder / "persisted_queries.json").read_text())
    return loaded


def test_relay_compiler_accepts_the_frontend_operations(compiled: Path) -> None:
    documents = persisted(compiled)
    names = {operation_name(text) for text in documents.values()}
    assert names == FRONTEND_OPERATIONS
    for document_id, text in documents.items():
        assert document_id == hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()
    refetch = next(t for t in documents.values() if "query ProductRowRefetchQuery" in t)
    assert "node(id: $nodeId)" in refetch, "refetched through node, by nodeId"


def test_relay_compiler_refuses_a_schema_without_node(relay_compiler: Path, tmp_path: Path) -> None:
    """Positive control: the same operations against the schema with no type
    implementing Node do not compile."""
    text = (ROOT / "schema.graphql").read_text().replace(" implements Node", "")
    done = compile_project(relay_compiler, tmp_path, text)
    assert done.returncode != 0
    assert "can never occur for parent type 'Node'" in done.stderr


def test_the_persisted_output_loads_into_the_registry(compiled: Path) -> None:
    registry = load_registry(schema, Limits(), compiled)
    assert set(registry.by_name) == FRONTEND_OPERATIONS
    for document_id, text in persisted(compiled).items():
        assert registry.document(document_id) == text


@pytest.fixture
async def enforced(compiled: Path) -> AsyncIterator[httpx.AsyncClient]:
    operations = OperationSettings(directory=compiled, trusted_documents=TrustedDocuments.ENFORCE)
    app = create_app(
        Settings(
            cursor_key=bytes(range(32)),
            admin_key=ADMIN_KEY,
            hash_salt=bytes(range(32)),
            sqlite_path=":memory:",
            limits=Limits(),
            operations=operations,
        )
    )
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 123))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as http,
    ):
        yield http


async def call(
    http: httpx.AsyncClient, body: dict[str, Any], key: str | None = None
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    result: dict[str, Any] = (await http.post("/graphql", json=body, headers=headers)).json()
    return result


async def test_relay_refetch_queries_run_by_id_under_enforce(
    enforced: httpx.AsyncClient, compiled: Path
) -> None:
    http = enforced
    ids = {
        text.split("(")[0].split("{")[0].split()[1]: i for i, text in persisted(compiled).items()
    }
    registered = await call(
        http,
        {
            "query": 'mutation($d: String!) { registerBrand(input: {name: "Relay", domain: $d}) '
            "{ apiKey brand { id nodeId } } }",
            "variables": {"d": f"{uuid.uuid4().hex[:8]}.example.com"},
        },
        ADMIN_KEY,
    )
    brand, key = (
        registered["data"]["registerBrand"]["brand"],
        registered["data"]["registerBrand"]["apiKey"],
    )
    products = []
    for name in ("First", "Second"):
        made = await call(
            http,
            {
                "query": "mutation($b: ID!, $n: String!) { registerProduct(input: "
                "{brandId: $b, name: $n}) { id nodeId } }",
                "variables": {"b": brand["id"], "n": name},
            },
            ADMIN_KEY,
        )
        products.append(made["data"]["registerProduct"])
    refetched = await call(
        http,
        {
            "documentId": ids["ProductRowRefetchQuery"],
            "variables": {"nodeId": products[0]["nodeId"]},
        },
        key,
    )
    assert refetched["data"]["node"]["id"] == products[0]["id"]
    assert refetched["data"]["node"]["nodeId"] == products[0]["nodeId"]
    page = await call(
        http,
        {
            "documentId": ids["BrandProductsPaginationQuery"],
            "variables": {"nodeId": brand["nodeId"], "count": 1},
        },
        key,
    )
    assert "errors" not in page, page
    connection = page["data"]["node"]["products"]
    assert connection["pageInfo"]["hasNextPage"] is True
    after = {"nodeId": brand["nodeId"], "count": 1, "cursor": connection["pageInfo"]["endCursor"]}
    rest = await call(
        http, {"documentId": ids["BrandProductsPaginationQuery"], "variables": after}, key
    )
    seen = [
        e["node"]["id"] for e in connection["edges"] + rest["data"]["node"]["products"]["edges"]
    ]
    assert sorted(seen) == sorted(p["id"] for p in products)
    refused = await call(http, {"query": "{ health { status } }"}, key)
    assert refused["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_ALLOWED"


PRODUCTS = """mutation($inputs: [RegisterProductInput!]!) {
  registerProducts(inputs: $inputs) { id }
}"""
GRANT = """mutation($b: ID!, $k: String!) {
  grantCredits(brandId: $b, amount: "100", idempotencyKey: $k, memo: "Relay") { id }
}"""


def relay_runtime(where: Path, gateway: Gateway, key: str, brand: str, data_id: str) -> Any:
    done = subprocess.run(
        ["node", str(PROJECT / "runtime.mjs")],
        cwd=PROJECT,
        env={
            **os.environ,
            "GATEWAY_URL": gateway.url,
            "API_KEY": key,
            "BRAND_ID": brand,
            "GENERATED": str(where / "__generated__"),
            "DATA_ID": data_id,
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


async def test_relay_runtime_with_readmes_get_data_id_joins_the_next_page(
    compiled: Path, tmp_path: Path
) -> None:
    """Eleven products: the brand page shows ten, the pagination query (through
    ``node(id: $nodeId)``) brings the eleventh into the same connection.
    Without ``getDataID`` (the positive control) it lands on another record."""
    gateway = await Gateway(tmp_path / "data", PROOFGATE_OPERATIONS_DIR=str(compiled)).start()
    try:
        brand, key = await gateway.brand()
        await gateway.data(GRANT, {"b": brand, "k": uuid.uuid4().hex}, LIVE_ADMIN_KEY)
        inputs = [{"brandId": brand, "name": f"Item {index}"} for index in range(11)]
        made = await gateway.data(PRODUCTS, {"inputs": inputs}, key)
        ids = {product["id"] for product in made["registerProducts"]}
        joined = relay_runtime(compiled.parent, gateway, key, brand, "nodeId")
        assert joined["first"] == 10
        assert sorted(joined["merged"]) == sorted(ids)
        apart = relay_runtime(compiled.parent, gateway, key, brand, "default")
        assert (apart["first"], len(apart["merged"])) == (10, 10)
    finally:
        await gateway.stop()
