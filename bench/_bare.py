"""Bare Strawberry serving the benchmarked shapes from memory.

The baseline of the budgets (docs/design.md, Performance budgets): the same field names and
nesting as the gateway's schema for the benchmarked operations, served the way
Strawberry's documentation tells every user to serve: ``ParserCache`` and
``ValidationCache``, a DataLoader per request (each product's brand goes
through it, as in the gateway), ``gc.freeze()`` after start-up, uvicorn with
uvloop and httptools. Resolvers return objects built once at import. What the
gateway spends beyond this is its storage, auth, checks and tracing.
``python -m bench._bare --port P`` serves it.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import sys
from enum import Enum
from typing import Any

import strawberry
from strawberry.asgi import GraphQL
from strawberry.dataloader import DataLoader
from strawberry.extensions import ParserCache, ValidationCache

__all__ = [
    "PAGE_SIZE",
    "ProductStatus",
    "ScanInput",
    "ScanResult",
    "app",
    "schema",
    "serve",
    "with_lifespan",
]

PAGE_SIZE = 50


@strawberry.enum
class ProductStatus(Enum):
    ACTIVE = "ACTIVE"
    TRANSFERRED = "TRANSFERRED"
    RECALLED = "RECALLED"
    FLAGGED = "FLAGGED"


@strawberry.enum
class ScanResult(Enum):
    AUTHENTIC = "AUTHENTIC"
    SUSPICIOUS = "SUSPICIOUS"
    COUNTERFEIT = "COUNTERFEIT"
    UNKNOWN = "UNKNOWN"


@strawberry.type
class Certificate:
    hash: str
    signature: str
    key_id: str
    algorithm: str
    chain_head: str


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class Edge:
    cursor: str
    node: Product


@strawberry.type
class ProductConnection:
    edges: list[Edge]
    page_info: PageInfo


@strawberry.type
class Brand:
    id: strawberry.ID
    name: str
    domain: str
    _products: strawberry.Private[ProductConnection | None] = None

    @strawberry.field
    def products(self, first: int | None = None, after: str | None = None) -> ProductConnection:
        assert self._products is not None
        return self._products


@strawberry.type
class Product:
    id: strawberry.ID
    name: str
    sku: str | None
    status: ProductStatus
    certificate: Certificate
    _brand_id: strawberry.Private[str]

    @strawberry.field
    async def brand(self, info: strawberry.Info) -> Brand:
        brand: Brand = await info.context["brands"].load(self._brand_id)
        return brand


@strawberry.type
class Viewer:
    role: str
    brand_id: strawberry.ID | None


@strawberry.type
class Verification:
    authentic: bool
    result: ScanResult
    product: Product | None
    signature_valid: bool
    chain_intact: bool
    claimed: bool
    is_claimant: bool
    warnings: list[str]
    scan_count: int


@strawberry.input
class ScanInput:
    country: str | None = None
    city: str | None = None
    device_fingerprint: str | None = None
    user_agent: str | None = None


def _product(brand: Brand, index: int) -> Product:
    digest = hashlib.sha256(f"product {index}".encode()).hexdigest()
    return Product(
        id=strawberry.ID(f"01BENCHPRODUCT{index:012d}"),
        name=f"Product {index}",
        sku=f"SKU-{index:05d}",
        status=ProductStatus.ACTIVE,
        certificate=Certificate(
            hash=digest,
            signature="s" * 86,
            key_id="k" * 16,
            algorithm="Ed25519",
            chain_head=digest,
        ),
        _brand_id=str(brand.id),
    )


BRAND = Brand(id=strawberry.ID("01BENCHBRAND00000000000000"), name="Bench", domain="bench.example")
PRODUCTS = [_product(BRAND, i) for i in range(PAGE_SIZE)]
BRAND._products = ProductConnection(
    edges=[Edge(cursor=f"cursor-{i:04d}-" + "c" * 80, node=p) for i, p in enumerate(PRODUCTS)],
    page_info=PageInfo(has_next_page=True, end_cursor=f"cursor-{PAGE_SIZE - 1:04d}-" + "c" * 80),
)
VERIFICATION = Verification(
    authentic=True,
    result=ScanResult.AUTHENTIC,
    product=PRODUCTS[0],
    signature_valid=True,
    chain_intact=True,
    claimed=False,
    is_claimant=False,
    warnings=[],
    scan_count=1,
)


async def _load_brands(ids: list[str]) -> list[Brand]:
    return [BRAND for _ in ids]


@strawberry.type
class Query:
    @strawberry.field
    async def brand(self, id: strawberry.ID) -> Brand | None:
        return BRAND

    @strawberry.field
    def viewer(self) -> Viewer:
        return Viewer(role="ANONYMOUS", brand_id=None)


@strawberry.type
class Mutation:
    @strawberry.mutation
    async def verify_product(self, code: str, scan: ScanInput | None = None) -> Verification:
        return VERIFICATION


schema = strawberry.Schema(
    query=Query,
    mutation=Mutation,
    extensions=[lambda: ParserCache(maxsize=100), lambda: ValidationCache(maxsize=100)],
)


class _GraphQL(GraphQL[dict[str, Any], None]):
    async def get_context(self, request: Any, response: Any) -> dict[str, Any]:
        return {"request": request, "response": response, "brands": DataLoader(_load_brands)}


graphql = _GraphQL(schema)


def with_lifespan(graphql: Any) -> Any:
    """``graphql`` plus the lifespan protocol the gateway's settings turn on:
    ``gc.freeze()`` once start-up is done, as the gateway freezes its heap."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await graphql(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if FREEZE_GC:
                    gc.collect()
                    gc.freeze()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    return app


app = with_lifespan(graphql)
FREEZE_GC = True


def serve(app: Any, port: int, *, freeze_gc: bool = True) -> None:
    """uvicorn as Strawberry's documentation serves it: uvloop and httptools."""
    import uvicorn

    global FREEZE_GC
    FREEZE_GC = freeze_gc
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        loop="uvloop",
        http="httptools",
        lifespan="on",
        server_header=False,
        log_level="info",
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench._bare")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--no-freeze-gc", action="store_true")
    args = parser.parse_args(argv)
    serve(app, args.port, freeze_gc=not args.no_freeze_gc)


if __name__ == "__main__":
    main(sys.argv[1:])
