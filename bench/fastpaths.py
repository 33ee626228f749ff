"""Each fast path against the library path it mirrors, in instructions per request.

Every fork of POST /graphql (docs/design.md, Fast paths and their switches)
must buy at least 5% on the shape it exists for, or go. For each setting of
``PROOFGATE_EXECUTION`` below, one process under callgrind starts the
gateway on a SQLite file, seeds a brand of 60 products, warms up, and then
counts the instructions of whole requests, the ASGI app called as the server
calls it (the server's own work, the same under every setting, is not
counted): the small query (``viewer``, anonymous) and the page of 50 (a
brand's key). Instruction counts, not the clock: the machine is shared, and
callgrind's count does not move with what else runs. ``python -m bench
fastpaths`` takes a few minutes, start-up and seeding uninstrumented. The
``protocol`` lane, below the app, has its table after these
(``bench/_protocol_instructions.py``: the small query handed to the
server's protocol in process, with and without the lane).
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from . import _protocol_instructions
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

SMALL = "{ viewer { role brandId __typename } }"
SHAPES = ("small query", "page of 50")

SETTINGS = {
    "all lanes": "compiled",
    "no entry": "compiled,-entry",
    "no prepared": "compiled,-prepared",
    "no plan": "compiled,-plan",
    "no fused": "compiled,-fused",
    "no projection": "compiled,-projection",
    "no projection, no fused": "compiled,-projection,-fused",
    "library": "library",
}
"""Each measured setting by name: its ``PROOFGATE_EXECUTION`` value."""

ROWS = (
    # lane, shape, with, without
    ("entry", "small query", "all lanes", "no entry"),
    ("entry", "page of 50", "all lanes", "no entry"),
    ("prepared", "small query", "all lanes", "no prepared"),
    ("prepared", "page of 50", "all lanes", "no prepared"),
    ("plan", "small query", "all lanes", "no plan"),
    ("plan", "page of 50", "all lanes", "no plan"),
    ("fused", "page of 50", "all lanes", "no fused"),
    ("fused", "page of 50 unprojected", "no projection", "no projection, no fused"),
    ("projection", "page of 50", "all lanes", "no projection"),
    ("every lane", "small query", "all lanes", "library"),
    ("every lane", "page of 50", "all lanes", "library"),
)
BAR = 0.05
"""What a fork must buy on its shape: 5% of the instructions without it."""


async def _count(setting: str, library: Path, directory: Path) -> dict[str, float]:
    """Instructions per request of each shape under one setting."""
    out = directory / f"{uuid.uuid4().hex}.out"
    arguments = (SETTINGS[setting],)
    counts = await counted("bench.fastpaths", arguments, library, out, len(SHAPES), REQUESTS)
    return dict(zip(SHAPES, counts, strict=True))


def _rows(counts: dict[str, dict[str, float]]) -> list[tuple[str, ...]]:
    rows = []
    for lane, shape, on, off in ROWS:
        measured = "page of 50" if shape.startswith("page") else shape
        with_it, without = counts[on][measured], counts[off][measured]
        saved = 1 - with_it / without
        verdict = "earns its place" if saved >= BAR else "below the 5% bar"
        rows.append((lane, shape, f"{with_it:,.0f}", f"{without:,.0f}", f"{saved:.1%}", verdict))
    return rows


async def run() -> None:
    title = (
        "fastpaths: instructions per request with and without each fast path, on its shape "
        f"(callgrind, {REQUESTS} requests after {REQUEST_WARMUP}, the ASGI app called in-process)"
    )
    header = ("lane", "shape", "with", "without", "saved", "")
    with counting(title, header) as built:
        if built is None:
            return
        directory, library = built
        counts = {setting: await _count(setting, library, directory) for setting in SETTINGS}
    print_table(title, _rows(counts), header)
    settings_header = ("setting", "PROOFGATE_EXECUTION", *SHAPES)
    print_table(
        "fastpaths: instructions per request under each setting",
        [
            (name, value, *(f"{counts[name][shape]:,.0f}" for shape in SHAPES))
            for name, value in SETTINGS.items()
        ],
        settings_header,
    )
    await _protocol_instructions.run()


# The child, under callgrind.


@asynccontextmanager
async def _gateway(execution: str) -> AsyncIterator[tuple[Any, str, str]]:
    """The app started on a SQLite file and seeded: the app, the brand, its key."""
    from api.app import create_app
    from api.settings.gateway import Settings
    from api.settings.limits import Limits

    from .execution import ADMIN_KEY, _seed

    with tempfile.TemporaryDirectory(prefix="proofgate-bench-") as directory:
        limits = Limits(execution=execution, rate_limit=None, key_rate_limit=None)
        settings = Settings(
            cursor_key=bytes(range(32)),
            admin_key=ADMIN_KEY,
            sqlite_path=str(Path(directory) / "bench.db"),
            limits=limits,
        )
        app = create_app(settings)
        transport = httpx.ASGITransport(app=app)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://bench") as http,
        ):
            brand, key = await _seed(http)
            gc.collect()
            gc.freeze()  # as the served gateway after start-up (api/runtime/gc_freeze.py)
            yield app, brand, key


async def _child(execution: str, library: str) -> None:
    from .execution import PAGE

    async with _gateway(execution) as (app, brand, key):
        small = json.dumps({"query": SMALL}).encode()
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
