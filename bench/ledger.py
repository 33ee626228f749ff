"""registerProduct with its registration fee against registerProduct without
one, and what one registration costs in write units.

Both runs go through the GraphQL schema on the embedded store (a file, WAL),
one brand each, in one process: the ratio is what the fee's three extra
actions (transaction item, posting, conditional balance ADD) cost a
registration. Write units come from the store's own capacity arithmetic
(DynamoDB's rules: 1 KB units, doubled in a transaction); the minimum is what
the registration's items cost if every one of them were written once, alone
in its transaction, and the fee's share is reported separately.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

from api.graphql.schema import schema
from domain.identifiers import hash_api_key
from domain.signing import KeyRing, SigningKey
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import Principal, Role
from services.context import Services
from storage import Storage
from storage.sqlite import open_sqlite
from storage.trace import Trace, tracing

from ._harness import Result, measure_async, print_table

N = 1500
CONCURRENCY = 8
FEE = Decimal("1.00")
ADMIN = Principal(Role.ADMIN)

REGISTER_BRAND = """mutation($d: String!) {
    registerBrand(input: {name: "Bench", domain: $d, plan: PRO}) { brand { id } }
}"""
GRANT = """mutation($b: ID!, $k: String!) {
    grantCredits(brandId: $b, amount: "1000000", idempotencyKey: $k) { id }
}"""
REGISTER = """mutation($input: RegisterProductInput!) { registerProduct(input: $input) { id } }"""


async def _execute(
    services: Services, principal: Principal, query: str, variables: dict[str, Any]
) -> Any:
    context = RequestContext(
        services, principal, Loaders(services.storage, principal.tenant), "bench"
    )
    result = await schema.execute(query, variable_values=variables, context_value=context)
    if result.errors:
        raise RuntimeError(result.errors)
    return result.data


async def _brand(services: Services) -> Principal:
    data = await _execute(
        services, ADMIN, REGISTER_BRAND, {"d": f"{uuid.uuid4().hex[:10]}.example.com"}
    )
    brand_id = data["registerBrand"]["brand"]["id"]
    await _execute(services, ADMIN, GRANT, {"b": brand_id, "k": uuid.uuid4().hex})
    return Principal(Role.BRAND, brand_id, "bench")


async def _register(services: Services, brand: Principal) -> None:
    """Each call a new name: the harness repeats indices for its warm-up."""
    product = {"brandId": brand.brand_id, "name": f"Product {uuid.uuid4().hex}"}
    await _execute(services, brand, REGISTER, {"input": product})


def _transaction_units(trace: Trace) -> tuple[float, int]:
    """Units and items of the registration's TransactWriteItems call."""
    (call,) = [c for c in trace.calls if c.operation == "TransactWriteItems"]
    return call.capacity, call.items


async def run() -> None:
    results: dict[Decimal, Result] = {}
    units: dict[Decimal, tuple[float, int, float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        storage = await open_sqlite(Path(directory) / "ledger.db", cursor_key=os.urandom(32))
        try:
            for fee in (FEE, Decimal(0)):
                results[fee], units[fee] = await _measure(storage, fee)
        finally:
            await storage.close()
    _print(results, units)


async def _measure(storage: Storage, fee: Decimal) -> tuple[Result, tuple[float, int, float]]:
    """Registrations at ``fee``, and the units one of them writes."""
    services = Services(
        storage=storage,
        admin_key_hash=hash_api_key("bench"),
        key_ring=KeyRing.of(SigningKey.generate()),
        hash_salt=os.urandom(32),
        registration_fee=fee,
    )
    brand = await _brand(services)
    label = f"registerProduct, fee {fee}" if fee else "registerProduct, no fee"

    async def operation(i: int) -> None:
        await _register(services, brand)

    result = await measure_async(label, operation, N, CONCURRENCY)
    with tracing() as trace:
        await _register(services, brand)
    capacity, items = _transaction_units(trace)
    return result, (capacity, items, trace.capacity)


def _print(results: dict[Decimal, Result], units: dict[Decimal, tuple[float, int, float]]) -> None:
    rows: list[tuple[str, ...]] = []
    for fee, result in results.items():
        capacity, items, total = units[fee]
        rows.append(
            (
                result.name,
                f"{result.ops_per_second:,.0f}",
                f"{result.p50_us:,.0f}",
                f"{result.p99_us:,.0f}",
                str(items),
                f"{capacity:g}",
                f"{2 * items:g}",
                f"{total:g}",
            )
        )
    header = (
        "operation",
        "ops/s",
        "p50 us",
        "p99 us",
        "tx items",
        "tx WCU",
        "min WCU",
        "request units",
    )
    print_table(
        f"Registration fee: registerProduct through GraphQL, sqlite file, {CONCURRENCY} in flight",
        rows,
        header,
    )
    with_fee, without = results[FEE], results[Decimal(0)]
    fee_units = units[FEE][0] - units[Decimal(0)][0]
    fee_items = units[FEE][1] - units[Decimal(0)][1]
    print(
        f"\nthroughput with fee / without: {with_fee.ops_per_second / without.ops_per_second:.2f}"
        f"\nwrite units the fee adds: {fee_units:g} for {fee_items} items (minimum {2 * fee_items})"
    )
