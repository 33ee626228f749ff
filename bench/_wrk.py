"""Load from ``wrk`` (a C load generator), so no Python process competes with
the servers for the same cores.

Each run writes a Lua script holding the request bodies (``wrk`` cycles
through them) and a ``done`` hook that prints the summary as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["WRK", "Request", "WrkResult", "run_wrk"]

WRK = shutil.which("wrk")
"""None when wrk is not installed (Debian: ``apt-get install wrk``)."""

_DONE = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,'
    .. '"socket_errors":%d,"non_2xx":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status))
end
"""


@dataclass(frozen=True)
class Request:
    body: str
    headers: Mapping[str, str]


@dataclass(frozen=True)
class WrkResult:
    requests: int
    per_second: float
    p50_ms: float
    p99_ms: float
    errors: int


def _lua_string(text: str) -> str:
    level = "=" * 3
    while f"]{level}]" in text:
        level += "="
    return f"[{level}[{text}]{level}]"


def _script(requests: Sequence[Request]) -> str:
    lines = ["local requests = {"]
    for request in requests:
        headers = {"Content-Type": "application/json", **request.headers}
        pairs = ", ".join(f"[ {_lua_string(k)} ] = {_lua_string(v)}" for k, v in headers.items())
        lines.append(f"  {{ body = {_lua_string(request.body)}, headers = {{ {pairs} }} }},")
    lines.append("}")
    lines.append("local index = 0")
    lines.append(
        "request = function()\n"
        "  index = index % #requests + 1\n"
        "  local r = requests[index]\n"
        '  return wrk.format("POST", "/graphql", r.headers, r.body)\n'
        "end"
    )
    return "\n".join(lines) + _DONE


async def run_wrk(
    port: int,
    requests: Sequence[Request],
    *,
    seconds: int,
    connections: int,
    threads: int = 1,
) -> WrkResult:
    assert WRK is not None, "wrk is not installed"
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(_script(requests))
    try:
        process = await asyncio.create_subprocess_exec(
            WRK,
            f"-t{threads}",
            f"-c{connections}",
            f"-d{seconds}s",
            "--timeout",
            "10s",
            "-s",
            script.name,
            f"http://127.0.0.1:{port}/graphql",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await process.communicate()
    finally:
        Path(script.name).unlink()
    text = output.decode()
    line = next((row for row in text.splitlines() if row.startswith("WRK_JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no summary:\n{text}")
    summary = json.loads(line.removeprefix("WRK_JSON "))
    return WrkResult(
        requests=summary["requests"],
        per_second=summary["requests"] / (summary["duration_us"] / 1e6),
        p50_ms=summary["p50_us"] / 1000,
        p99_ms=summary["p99_us"] / 1000,
        errors=summary["socket_errors"] + summary["non_2xx"],
    )
