"""``verifyProduct`` in instructions, with the relay's work for each scan.

``python -m bench api`` times ``verifyProduct`` against bare Strawberry's
durable work over HTTP, a ratio that moved from 1.50x to 1.37x between two
loaded runs with no change to either side's CPU found. Here one process
under callgrind seeds ``PRODUCTS`` products with one provenance event each
(as ``bench/api.py``), verifies each once to warm the verdicts and plans,
and counts ``VERIFICATIONS`` more through the app in process (the mutation,
rotating over the products as ``bench/api.py`` does), then until the relay
has processed their outbox items (the rules, alert writes): one count per
verification (docs/design.md, Verify path). Callgrind counts the event
loop's thread; the SQLite writer's thread is not in it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import httpx

from ._harness import print_table
from ._instructions import asgi_request, counted, counting
from .api import VERIFY

__all__ = ["run"]

PRODUCTS = 500
VERIFICATIONS = 100
_ADMIN_KEY = "bench-admin-" + uuid.uuid4().hex


async def run() -> None:
    title = (
        "verify: verifyProduct in process, the mutation and its relay work, instructions per "
        f"verification (callgrind, {VERIFICATIONS} over {PRODUCTS} products after one each)"
    )
    header = ("shape", "instructions / verification")
    with counting(title, header) as built:
        if built is None:
            return
        directory, library = built
        out = directory / "verify.out"
        (count,) = await counted(__name__, (), library, out, 1, VERIFICATIONS)
    print_table(title, [("verifyProduct", f"{count:,.0f}")], header)


# The child, under callgrind.


async def _seeded(http: httpx.AsyncClient, products: int) -> list[str]:
    """A brand's products with one event each: their verification codes."""

    async def gql(query: str, variables: dict[str, Any], key: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        body = {"query": query, "variables": variables}
        answer = (await http.post("/graphql", json=body, headers=headers)).json()
        assert "errors" not in answer, answer
        return answer["data"]

    from .api import ADD_EVENT, GRANT, REGISTER_BRAND, REGISTER_PRODUCTS

    domain = f"{uuid.uuid4().hex[:12]}.example"
    brand = (await gql(REGISTER_BRAND, {"domain": domain}, _ADMIN_KEY))["registerBrand"]
    brand_id, key = brand["brand"]["id"], brand["apiKey"]
    await gql(GRANT, {"brand": brand_id, "key": uuid.uuid4().hex}, _ADMIN_KEY)
    codes = []
    for start in range(0, products, 100):
        inputs = [
            {"brandId": brand_id, "name": f"Product {i}", "sku": f"SKU-{i:05d}"}
            for i in range(start, min(products, start + 100))
        ]
        registered = await gql(REGISTER_PRODUCTS, {"inputs": inputs}, key)
        for product in registered["registerProducts"]:
            await gql(ADD_EVENT, {"id": product["id"]}, key)
            codes.append(product["verificationCode"])
    return codes


async def _child(library: str, products: int = PRODUCTS) -> None:
    import ctypes

    from api.app import create_app
    from api.settings.gateway import Settings
    from api.settings.limits import Limits
    from services.pipeline.relay import Relay

    processed = [0]
    process = Relay._process

    async def counted_process(self: Relay, claimed: Any) -> None:
        try:
            await process(self, claimed)
        finally:
            processed[0] += 1

    Relay._process = counted_process  # type: ignore[method-assign]
    measure = ctypes.CDLL(library)
    with tempfile.TemporaryDirectory(prefix="proofgate-bench-") as directory:
        settings = Settings(
            cursor_key=bytes(range(32)),
            admin_key=_ADMIN_KEY,
            sqlite_path=str(Path(directory) / "bench.db"),
            limits=Limits(rate_limit=None, key_rate_limit=None),
        )
        app = create_app(settings)
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://bench") as http,
        ):
            codes = await _seeded(http, products)

            async def verify(number: int) -> None:
                scan = {"country": "FR", "city": "Paris", "userAgent": "proofgate-bench/1.0"}
                scan["deviceFingerprint"] = f"device-{number % 97}"
                variables = {"code": codes[number % len(codes)], "scan": scan}
                body = json.dumps({"query": VERIFY, "variables": variables}).encode()
                await asgi_request(app, body, None)  # the app called as the server calls it

            async def settled(target: int) -> None:
                while processed[0] < target:  # the relay's work for each scan
                    await asyncio.sleep(0.01)

            for number in range(len(codes)):
                await verify(number)
            await settled(len(codes))
            gc.collect()
            gc.freeze()
            measure.measure_start()
            for number in range(VERIFICATIONS):
                await verify(len(codes) + number)
            await settled(len(codes) + VERIFICATIONS)
            measure.measure_stop()


if __name__ == "__main__":
    import uvloop

    uvloop.install()
    asyncio.run(_child(sys.argv[1]))
