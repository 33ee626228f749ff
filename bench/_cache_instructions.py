"""Instructions per request through the caches: the small query and the
page of 50 with every cache off, with the storage cache on (every read a
hit: docs/design.md, Storage cache) and answered from the response cache
(docs/design.md, Response cache), under callgrind, the ASGI app called
in-process as in ``bench/fastpaths.py``. Instruction counts do not move with
what else runs on the machine; req/s (``bench/_cache_http.py``) do."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from ._harness import print_table
from ._instructions import (
    REQUEST_WARMUP,
    REQUESTS,
    asgi_request,
    count_requests,
    counted,
    counting,
)

__all__ = ["run"]

VIEWER = "query Viewer { viewer { role brandId __typename } }"
SHAPES = ("small query", "page of 50")
SETTINGS = ("uncached", "storage cache", "response cache")


async def _count(setting: str, library: Path, directory: Path) -> dict[str, float]:
    out = directory / f"{setting.replace(' ', '-')}.out"
    arguments = (setting,)
    counts = await counted(
        "bench._cache_instructions", arguments, library, out, len(SHAPES), REQUESTS
    )
    return dict(zip(SHAPES, counts, strict=True))


async def run() -> None:
    title = (
        "cache: instructions per request, every cache off, the storage cache on (all hits), "
        f"the response cache on (callgrind, {REQUESTS} requests after {REQUEST_WARMUP}, "
        "the ASGI app called in-process)"
    )
    header = ("shape", "uncached", "storage cache", "saved", "response cache", "saved")
    with counting(title, header) as built:
        if built is None:
            return
        directory, library = built
        counts = {s: await _count(s, library, directory) for s in SETTINGS}
    rows: list[tuple[str, ...]] = []
    for shape in SHAPES:
        off = counts["uncached"][shape]
        row = [shape, f"{off:,.0f}"]
        for setting in ("storage cache", "response cache"):
            on = counts[setting][shape]
            row += [f"{on:,.0f}", f"{1 - on / off:.1%}"]
        rows.append(tuple(row))
    print_table(title, rows, header)
    print("\n" + json.dumps({"cache_instructions": counts}))


# The child, under callgrind.


@asynccontextmanager
async def _gateway(setting: str) -> AsyncIterator[tuple[Any, str, str]]:
    from api.app import create_app
    from api.settings.gateway import Settings
    from api.settings.limits import Limits
    from api.settings.operations import OperationSettings

    from .execution import ADMIN_KEY, PAGE, _seed

    with tempfile.TemporaryDirectory(prefix="proofgate-bench-") as directory:
        operations = Path(directory) / "operations"
        operations.mkdir()
        (operations / "page.graphql").write_text(PAGE)
        (operations / "viewer.graphql").write_text(VIEWER)
        settings = Settings(
            cursor_key=bytes(range(32)),
            admin_key=ADMIN_KEY,
            sqlite_path=str(Path(directory) / "bench.db"),
            limits=Limits(rate_limit=None, key_rate_limit=None),
            operations=OperationSettings(directory=operations),
        )
        if setting == "storage cache":
            settings = replace(settings, cache=True)
        if setting == "response cache":
            settings = replace(
                settings,
                cache=True,
                response_cache=True,
                response_cache_operations=("Page", "Viewer"),
            )
        app = create_app(settings)
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://bench") as http,
        ):
            brand, key = await _seed(http)
            gc.collect()
            gc.freeze()
            yield app, brand, key


async def _child(setting: str, library: str) -> None:
    from .execution import PAGE

    async with _gateway(setting) as (app, brand, key):
        small = json.dumps({"query": VIEWER}).encode()
        page = json.dumps({"query": PAGE, "variables": {"id": brand}}).encode()
        await count_requests(
            library,
            [partial(asgi_request, app, small, None), partial(asgi_request, app, page, key)],
        )


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(_child(sys.argv[1], sys.argv[2]))
