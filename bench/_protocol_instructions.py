"""The small query through the server's HTTP protocol, in process, in instructions.

``python -m bench served`` counts the whole served process under wrk, less
what it does idle in the same time; on a loaded machine the idle share moves
with how many requests wrk gets through, and the count with it (300-335k the
same day). Here the request's bytes are handed to the protocol's
``data_received`` as the event loop hands them over, in the process that
counts: ``proofgate serve``'s app and uvicorn config (``api/cli/serve.py``,
its request line written), the protocol on a transport that keeps what is
written, one keep-alive connection, one request at a time, until the answer
is written and the request's task has ended. What is not counted is the
socket: the reads, the writes and the loop's polling (the same for every
protocol). Under ``proofgate serve``'s protocol (``LeanHttpProtocol``), with
its lane off (``OneWriteHttpProtocol``) and uvicorn's own
(docs/design.md, The server under the app).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import tempfile
from typing import Any

from ._harness import print_table
from ._instructions import count_requests, counted, counting

__all__ = ["run"]

REQUESTS = 200
WARMUP = 300
SMALL = json.dumps({"query": "{ viewer { role brandId __typename } }"}).encode()
REQUEST = (
    b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n" % len(SMALL) + SMALL
)
PROTOCOLS = {
    "proofgate serve (lean cycle)": "compiled",
    "protocol lane off (one write)": "compiled,-protocol",
    "uvicorn's httptools protocol": "uvicorn",
}
"""Each protocol by name: its ``PROOFGATE_EXECUTION``, or uvicorn's own."""


async def run() -> None:
    title = (
        "protocol: the small query through the server's HTTP protocol in process, "
        f"instructions per request (callgrind, {REQUESTS} requests after {WARMUP}; "
        "the socket's reads, writes and polling not counted)"
    )
    header = ("protocol", "instructions / request", "")
    with counting(title, header) as built:
        if built is None:
            return
        directory, library = built
        counts = {}
        for protocol, setting in PROTOCOLS.items():
            out = directory / f"{setting.replace(',', '_')}.out"
            arguments = (setting,)
            (count,) = await counted(__name__, arguments, library, out, 1, REQUESTS)
            counts[protocol] = count
    lean = counts["proofgate serve (lean cycle)"]
    rows = [
        (protocol, f"{count:,.0f}", "" if count == lean else f"lean cycle {lean / count - 1:+.1%}")
        for protocol, count in counts.items()
    ]
    print_table(title, rows, header)


# The child, under callgrind.


class _Transport:
    """What the protocol writes, and a future the answer's write sets."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.answered: asyncio.Future[None] | None = None
        self.closing = False

    def write(self, data: bytes) -> None:
        self.written.append(data)
        if self.answered is not None and not self.answered.done():
            self.answered.set_result(None)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...


async def _child(setting: str, library: str) -> None:
    from uvicorn.lifespan.on import LifespanOn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    from uvicorn.server import ServerState

    from api.cli.serve import _app, _config
    from api.settings.gateway import Settings

    from .api import GATEWAY_ENV

    with tempfile.TemporaryDirectory(prefix="proofgate-bench-") as directory:
        execution = "compiled" if setting == "uvicorn" else setting
        env = {**GATEWAY_ENV, "PROOFGATE_DATA_DIR": directory, "PROOFGATE_EXECUTION": execution}
        settings = Settings.from_env(env)
        config = _config(_app(settings), settings, argparse.Namespace(proxy_headers=True))
        if setting == "uvicorn":
            config.http = HttpToolsProtocol
        config.load()
        lifespan = LifespanOn(config)
        await lifespan.startup()
        loop = asyncio.get_running_loop()
        state = ServerState()
        state.default_headers = [(b"date", b"Sun, 06 Dec 2026 15:00:00 GMT")]
        protocol = config.http_protocol_class(
            config=config, server_state=state, app_state=lifespan.state, _loop=loop
        )
        transport = _Transport()
        protocol.connection_made(transport)

        async def request() -> None:
            transport.answered = loop.create_future()
            protocol.data_received(REQUEST)
            await transport.answered
            while state.tasks:  # the request's task ends
                await asyncio.sleep(0)
            answer = b"".join(transport.written)  # uvicorn's own writes head and body apart
            assert answer.startswith(b"HTTP/1.1 200 ") and b'"errors"' not in answer, answer
            transport.written.clear()

        gc.collect()
        await count_requests(library, [request], warmup=WARMUP, requests=REQUESTS)
        protocol.connection_lost(None)
        await lifespan.shutdown()


if __name__ == "__main__":
    import uvloop

    uvloop.install()
    asyncio.run(_child(sys.argv[1], sys.argv[2]))
