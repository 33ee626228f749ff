"""The small query served over HTTP, counted in instructions per request.

``python -m bench fastpaths`` counts the ASGI app called in-process; what the
server does around it (the socket reads and writes, httptools' parse, the
protocol's scope and messages, the event loop) is not in it, and on a small
query it is a third of the request. Here the gateway runs as an operator
runs it, under callgrind with instrumentation off while it starts and warms
up; then ``callgrind_control`` switches it on, counts the process alone for
``IDLE_SECONDS`` (its relay, tailer and timers, which fire by the clock while
callgrind makes each request some fifty times slower), and then while wrk (a
C process, outside valgrind) sends the small query over 16 keep-alive
connections. Per request: the total over the requests wrk counted, and the
same less the idle rate times the run's length. The machine being shared
moves how many requests wrk gets through (and so the idle share), not the
count of a request (docs/design.md, The server under the app).

``proofgate serve`` with and without its protocol lane (``LeanHttpProtocol``,
``PROOFGATE_EXECUTION=compiled,-protocol``) and stock uvicorn on the same app factory (whose
``proofgate.request`` logger nobody configures, so it writes no request
line) are measured; the dumps are kept under ``python -m bench.served DIR``
for ``callgrind_annotate``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from . import _server
from ._harness import print_table
from ._server import Server, free_port, serving
from ._wrk import WRK, Request, run_wrk
from .api import GATEWAY_ENV, SMALL
from .servers import ENVIRONMENTS, LANE_OFF, OURS, _commands

__all__ = ["run"]

SECONDS = 20
"""wrk's run under callgrind: a few thousand small queries on a quiet machine."""
IDLE_SECONDS = 5
"""Counted with no load first: what the process does on its own, per second."""
CONNECTIONS = 16
SERVERS = (OURS, LANE_OFF, "uvicorn (stock httptools)")
"""``proofgate serve`` with and without its protocol lane, and stock uvicorn."""


def _control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def _total(dump: Path) -> int:
    for line in dump.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no instruction total in {dump}")


async def _dump(pid: int, out: Path, number: int) -> int:
    """The instructions since the last zero, dumped as ``out.<number>``."""
    _control(pid, f"--dump=d{number}")
    dump = out.parent / f"{out.name}.{number}"
    deadline = time.monotonic() + 60
    while not dump.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(0.5)  # written whole
    return _total(dump)


async def _measure(server: Server, out: Path, small: Request) -> tuple[float, float, int]:
    """Instructions per request, raw and less what the process does idle in
    the same time (its relay, tailer and timers), and the requests counted."""
    pid = server.process.pid
    await run_wrk(server.port, [small], seconds=2, connections=CONNECTIONS)
    _control(pid, "--instr=on")
    await run_wrk(server.port, [small], seconds=3, connections=CONNECTIONS)
    _control(pid, "--zero")
    started = time.monotonic()
    await asyncio.sleep(IDLE_SECONDS)
    idle = await _dump(pid, out, 1) / (time.monotonic() - started)
    _control(pid, "--zero")
    started = time.monotonic()
    result = await run_wrk(server.port, [small], seconds=SECONDS, connections=CONNECTIONS)
    total = await _dump(pid, out, 2)
    elapsed = time.monotonic() - started
    if result.errors or not result.requests:
        raise RuntimeError(f"{server.name}: {result.errors} errors, {result.requests} requests")
    net = total - idle * elapsed
    return total / result.requests, net / result.requests, result.requests


async def run(keep: Path | None = None) -> None:
    title = (
        "served: the small query over HTTP, whole server process in instructions per request "
        f"(callgrind, wrk {CONNECTIONS} connections for {SECONDS} s)"
    )
    header = ("server", "instructions / request", "less idle", "requests counted")
    if WRK is None or shutil.which("valgrind") is None:
        print_table(title, [("skipped", "needs wrk and valgrind", "", "")], header)
        return
    _server.STARTUP_SECONDS = 300.0  # start-up under valgrind, uninstrumented but slower
    rows = []
    small = Request(json.dumps({"query": SMALL}), {})
    with tempfile.TemporaryDirectory() as directory:
        where = keep or Path(directory)
        for name in SERVERS:
            port = free_port()
            command = _commands(port, Path(directory) / "data")[name]
            assert command is not None
            out = where / f"{SERVERS.index(name)}.callgrind"
            valgrind = [
                "valgrind", "--tool=callgrind", "--instr-atstart=no",
                f"--callgrind-out-file={out}",
            ]  # fmt: skip
            env = {
                **GATEWAY_ENV,
                "PROOFGATE_DATA_DIR": str(Path(directory) / "data"),
                **ENVIRONMENTS.get(name, {}),
            }
            with ExitStack() as stack:
                server = stack.enter_context(
                    serving(name, [*valgrind, *command], port=port, probe="/health",
                            log_dir=Path(directory), env=env)
                )  # fmt: skip
                raw, net, requests = await _measure(server, out, small)
            rows.append((name, f"{raw:,.0f}", f"{net:,.0f}", f"{requests:,}"))
    print_table(title, rows, header)


if __name__ == "__main__":
    asyncio.run(run(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
