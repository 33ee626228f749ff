"""The fan-out's subscribers, held by a C program (``bench/fanout.c``) the way
``_wrk`` drives HTTP load with wrk: a Python client decoding 1,000 frames per
alert costs the two cores as much as the gateway sending them, and the
benchmark would measure the client (docs/design.md, Performance budgets).

The source is compiled with the machine's C compiler into a directory the
caller owns; ``CC`` is None when there is none, and the caller skips the
measurement with a message saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._harness import CC

__all__ = ["CC", "Arrival", "FanoutClient", "FanoutError", "build", "fanout"]

SOURCE = Path(__file__).with_name("fanout.c")
_LINE_LIMIT = 1 << 22
"""A ``times`` line holds one integer per socket (about 20 bytes each)."""


class FanoutError(RuntimeError):
    """The client failed: its own one-line message, or a build error."""


@dataclass(frozen=True)
class Arrival:
    """One alert: the ``next`` message as the sockets received it (all of
    them byte for byte, or the client fails) and when each socket read it,
    in ``time.monotonic_ns()`` nanoseconds."""

    message: dict[str, Any]
    times_ns: list[int]


def build(directory: Path) -> Path:
    assert CC is not None, "no C compiler"
    binary = directory / "fanout"
    result = subprocess.run(
        [CC, "-std=c99", "-O2", "-Wall", "-Wextra", "-o", str(binary), str(SOURCE)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise FanoutError(f"{CC} could not build {SOURCE.name}:\n{result.stderr}")
    return binary


class FanoutClient:
    def __init__(self, process: asyncio.subprocess.Process, sockets: int) -> None:
        self._process = process
        self._sockets = sockets
        self._alerts = 0

    async def _line(self) -> str:
        assert self._process.stdout is not None
        line = await self._process.stdout.readline()
        if not line:
            raise FanoutError(await self._failure())
        return line.decode().rstrip("\n")

    async def _failure(self) -> str:
        assert self._process.stderr is not None
        code = await self._process.wait()
        message = (await self._process.stderr.read()).decode().strip()
        return f"the fan-out client exited with {code}: {message or 'no message'}"

    async def ready(self) -> None:
        """Returns once every socket is subscribed."""
        line = await self._line()
        if line != "ready":
            raise FanoutError(f"the fan-out client said {line[:200]!r}, not 'ready'")

    async def arrival(self) -> Arrival:
        """The next alert, once every socket has it."""
        alert = await self._line()
        times = await self._line()
        prefix = f"alert {self._alerts} "
        if not alert.startswith(prefix) or not times.startswith(f"times {self._alerts} "):
            raise FanoutError(f"unexpected lines from the fan-out client: {alert[:200]!r}")
        stamps = [int(stamp) for stamp in times.split()[2:]]
        if len(stamps) != self._sockets:
            raise FanoutError(f"{len(stamps)} arrival times for {self._sockets} sockets")
        self._alerts += 1
        return Arrival(json.loads(alert.removeprefix(prefix)), stamps)

    def holding(self) -> None:
        """Raises unless the client still holds its sockets (``alerts=0``):
        it exits, saying why, when the server closes one."""
        if self._process.returncode is not None:
            raise FanoutError(f"the fan-out client exited with {self._process.returncode}")

    async def finish(self) -> None:
        """Waits for the client to exit after its last alert."""
        if await self._process.wait() != 0:
            raise FanoutError(await self._failure())


@asynccontextmanager
async def fanout(
    binary: Path,
    port: int,
    *,
    sockets: int,
    alerts: int,
    init: Mapping[str, Any],
    subscribe: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    timeout: float,
) -> AsyncIterator[FanoutClient]:
    """``sockets`` connections to 127.0.0.1:``port``/graphql, each sending
    ``init`` then ``subscribe`` (or, given several, socket I the I-th modulo
    their count); ``timeout`` (s) bounds each wait for progress. The
    messages go on stdin: ``init`` holds an API key. ``alerts=0`` holds the
    subscriptions, taking whatever arrives, until the context exits."""
    subscribes = [subscribe] if isinstance(subscribe, Mapping) else list(subscribe)
    process = await asyncio.create_subprocess_exec(
        str(binary),
        str(port),
        str(sockets),
        str(alerts),
        str(int(timeout * 1000)),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_LINE_LIMIT,
    )
    try:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            # A client that already failed (a bad argument) says why on stderr,
            # which the first read reports.
            lines = [json.dumps(message) for message in (init, *subscribes)]
            process.stdin.write("".join(f"{line}\n" for line in lines).encode())
            await process.stdin.drain()
        process.stdin.close()
        yield FanoutClient(process, sockets)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
