"""The server under the app: the same gateway under uvicorn, granian and hypercorn.

``proofgate serve`` runs uvicorn with ``LeanHttpProtocol``
(``api/runtime/http_protocol.py``); with its lane off
(``PROOFGATE_EXECUTION=compiled,-protocol``) it runs ``OneWriteHttpProtocol``,
the row beside it. Here the same app factory
(``api.cli.serve:worker_app``), one worker each, on one SQLite file, is served
by ``proofgate serve``, stock uvicorn (httptools, uvloop), granian (ASGI,
uvloop) and hypercorn (uvloop), and wrk drives each in turn for a few
seconds, the small query then the page of 50, in interleaved rounds, so a
burst of load elsewhere on the machine falls on one round of one server, not
on the verdict (docs/design.md, The server under the app). A server that is
not installed (granian, hypercorn: ``pip install granian hypercorn``) is
left out and named.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import statistics
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ._harness import print_table
from ._server import Server, free_port, serving
from ._wrk import WRK, Request, run_wrk
from .api import GATEWAY_ENV, PAGE, SMALL, _gql, _seed

__all__ = ["ENVIRONMENTS", "LANE_OFF", "OURS", "coroutine_app", "run"]

ROUNDS = 3
SECONDS = 4
CONNECTIONS = 16
PRODUCTS = 60


OURS = "proofgate serve (uvicorn + lean cycle)"
LANE_OFF = "proofgate serve, protocol lane off (OneWrite)"
ENVIRONMENTS = {LANE_OFF: {"PROOFGATE_EXECUTION": "compiled,-protocol"}}
"""A server's variables beside the gateway's (``bench.api.GATEWAY_ENV``)."""


def _commands(port: int, data_dir: Path) -> dict[str, list[str] | None]:
    """Each server's command on ``port``, or None when it is not installed."""
    python = sys.executable
    factory = "api.cli.serve:worker_app"
    granian = shutil.which("granian", path=str(Path(python).parent))
    serve = [
        python, "-m", "api.cli.main", "serve",
        "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data_dir),
    ]  # fmt: skip
    return {
        OURS: serve,
        LANE_OFF: serve,
        "uvicorn (stock httptools)": [
            python, "-m", "uvicorn", "--factory", factory, "--host", "127.0.0.1",
            "--port", str(port), "--loop", "uvloop", "--http", "httptools",
            "--no-access-log", "--no-server-header", "--lifespan", "on", "--interface", "asgi3",
        ],
        "granian": None if granian is None else [
            granian, "--interface", "asgi", "--factory", factory, "--host", "127.0.0.1",
            "--port", str(port), "--loop", "uvloop", "--workers", "1",
        ],
        "hypercorn": None if importlib.util.find_spec("hypercorn") is None else [
            python, "-m", "hypercorn", "--bind", f"127.0.0.1:{port}",
            "--worker-class", "uvloop", "bench.servers:coroutine_app()",
        ],
    }  # fmt: skip


def coroutine_app() -> Any:
    """``worker_app`` behind a coroutine function: hypercorn takes an app
    whose ``__call__`` is not one for WSGI, and ours returns the inner app's
    awaitable (``ProofgateApp``)."""
    from api.cli.serve import worker_app

    inner = worker_app()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await inner(scope, receive, send)

    return app


async def run() -> None:
    title = (
        f"servers: the gateway under each server, one worker, wrk {CONNECTIONS} connections, "
        f"{ROUNDS} interleaved rounds of {SECONDS} s per server and shape (req/s per round)"
    )
    header = (
        "server",
        "small query",
        "page of 50",
        "small / proofgate serve",
        "CPU us / small query",
    )
    if WRK is None:
        print_table(title, [("skipped", "wrk is not installed", "", "", "")], header)
        return
    with tempfile.TemporaryDirectory() as directory, ExitStack() as stack:
        data_dir = Path(directory)
        env = {**GATEWAY_ENV, "PROOFGATE_DATA_DIR": str(data_dir / "data")}
        servers: list[Server] = []
        missing: list[str] = []
        for name, command in _commands(0, data_dir / "data").items():
            if command is None:
                missing.append(name)
                continue
            port = free_port()
            command = _commands(port, data_dir / "data")[name]
            assert command is not None
            server = serving(
                name,
                command,
                port=port,
                probe="/health",
                log_dir=data_dir,
                env={**env, **ENVIRONMENTS.get(name, {})},
            )
            servers.append(stack.enter_context(server))
        fixture = _seed(servers[0], count=PRODUCTS)
        page = Request(
            json.dumps({"query": PAGE, "variables": {"id": fixture.brand_id}}),
            {"Authorization": f"Bearer {fixture.brand_key}"},
        )
        for server in servers:  # every server answers the page alike before it is timed
            _gql(server, PAGE, {"id": fixture.brand_id}, fixture.brand_key)
        small = Request(json.dumps({"query": SMALL}), {})
        results = await _rounds(servers, [small, page])
    print_table(title, _rows(results), header)
    if missing:
        print(f"  not installed, left out: {', '.join(missing)}")


async def _rounds(servers: list[Server], shapes: list[Request]) -> dict[str, list[list[float]]]:
    """Per server: each round's small query and page in requests a second,
    and the small query's CPU time a request in microseconds (the process's
    user and system time from ``/proc``, which load elsewhere moves less than
    throughput; a server's worker processes, granian's, are not counted)."""
    results: dict[str, list[list[float]]] = {s.name: [[], [], []] for s in servers}
    for server in servers:  # warm-up: plans compiled, caches filled
        for request in shapes:
            await run_wrk(server.port, [request], seconds=1, connections=CONNECTIONS)
    for _ in range(ROUNDS):
        for server in servers:
            for index, request in enumerate(shapes):
                before = _cpu_seconds(server.process.pid)
                result = await run_wrk(
                    server.port, [request], seconds=SECONDS, connections=CONNECTIONS
                )
                if result.errors:
                    raise RuntimeError(f"{server.name}: {result.errors} errors under load")
                results[server.name][index].append(result.per_second)
                if index == 0 and result.requests:
                    spent = _cpu_seconds(server.process.pid) - before
                    results[server.name][2].append(spent / result.requests * 1e6)
    return results


def _cpu_seconds(pid: int) -> float:
    """User and system time of process ``pid`` so far (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rows(results: dict[str, list[list[float]]]) -> list[tuple[str, ...]]:
    ours = next(iter(results.values()))
    rows = []
    for name, (small, page, cpu) in results.items():
        ratios = [a / b for a, b in zip(small, ours[0], strict=True)]
        rows.append(
            (
                name,
                " / ".join(f"{v:,.0f}" for v in small),
                " / ".join(f"{v:,.0f}" for v in page),
                f"{statistics.median(ratios):.2f}x",
                " / ".join(f"{v:,.1f}" for v in cpu),
            )
        )
    return rows


if __name__ == "__main__":
    asyncio.run(run())
