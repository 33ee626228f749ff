"""Instructions counted under callgrind, and the page's execution phase so counted.

A clock on a shared two-core machine moves with everything else that runs
(other processes, the host's other guests); an instruction count does not.
A counted child runs under ``valgrind --tool=callgrind`` with
instrumentation off while it starts, seeds and warms up, and switches it on
around what it counts through a three-line C library compiled for the run
(``cc``, valgrind's headers): ``counted`` runs such a child and reads its
dumps, ``count_requests`` is the child's side for whole requests
(``bench/fastpaths.py``, ``bench/_cache_instructions.py``: the ASGI app
called in-process, as the server calls it, by ``asgi_request``). Without
valgrind or a C compiler the tables say so.

``python -m bench._instructions EXECUTOR COUNT LIBRARY`` seeds the
in-process gateway of ``bench.execution``, warms the executor up, and runs
the page's execution phase COUNT times between the two client requests;
start-up and seeding run uninstrumented, so the section takes about a minute.

Callgrind switches collection on for the thread that asks, so what is counted
is the event loop's thread: the store is a SQLite file (``seeded``), whose
reads run there, as the served gateway's do.
"""

from __future__ import annotations

import asyncio
import ctypes
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ._harness import CC, print_table

__all__ = [
    "REQUESTS",
    "WARMUP",
    "asgi_request",
    "client_library",
    "count_requests",
    "counted",
    "counting",
]

EXECUTIONS = 40
WARMUP = 20
"""Executions before the counted ones: plans compiled, caches warm."""
REQUESTS = 40
"""Whole requests counted per shape by ``count_requests``."""
REQUEST_WARMUP = 30
"""Requests of a shape before its counted ones."""

_CLIENT = """#include <valgrind/callgrind.h>
void measure_start(void) {
    CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT;
}
void measure_stop(void) {
    CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT("measured"); CALLGRIND_STOP_INSTRUMENTATION;
}
"""


def client_library(directory: Path) -> Path | str:
    """The client-request library, or why there is none."""
    if shutil.which("valgrind") is None:
        return "valgrind is not installed"
    if CC is None:
        return "no C compiler (cc, gcc or clang)"
    source, library = directory / "measure.c", directory / "measure.so"
    source.write_text(_CLIENT)
    built = subprocess.run(
        [CC, "-O2", "-shared", "-fPIC", "-o", str(library), str(source)],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        return f"the callgrind client did not compile (valgrind's headers?): {built.stderr[:200]}"
    return library


@contextmanager
def counting(title: str, header: Sequence[str]) -> Iterator[tuple[Path, Path] | None]:
    """A temporary directory with the client library built in it, or None
    once ``title``'s table is printed as skipped, saying why."""
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        library = client_library(directory)
        if isinstance(library, str):
            print_table(title, [("skipped", library, *[""] * (len(header) - 2))], header)
            yield None
        else:
            yield directory, library


async def counted(
    module: str, arguments: Sequence[str], library: Path, out: Path, dumps: int, each: int
) -> list[float]:
    """Run ``python -m module *arguments library`` under callgrind and read
    its ``dumps`` dumps (one per ``measure_start``/``measure_stop`` pair), each
    divided by the ``each`` repetitions it counted."""
    process = await asyncio.create_subprocess_exec(
        "valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
        f"--callgrind-out-file={out}",
        sys.executable, "-m", module, *arguments, str(library),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, stderr = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"callgrind run failed: {stderr.decode(errors='replace')[-800:]}")
    return [_total(Path(f"{out}.{number}")) / each for number in range(1, dumps + 1)]


def _total(dumped: Path) -> int:
    if not dumped.exists():
        raise RuntimeError(f"callgrind wrote no {dumped.name}")
    for line in dumped.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"no instruction total in {dumped}")


async def count_requests(
    library: str,
    shapes: Sequence[Callable[[], Awaitable[None]]],
    *,
    warmup: int = REQUEST_WARMUP,
    requests: int = REQUESTS,
) -> None:
    """The child's side of ``counted``: each shape's request ``warmup`` times,
    then ``requests`` times counted, one dump per shape, in order."""
    measure = ctypes.CDLL(library)
    for request in shapes:
        for _ in range(warmup):
            await request()
        measure.measure_start()
        for _ in range(requests):
            await request()
        measure.measure_stop()


def _scope(body: bytes, key: str | None) -> dict[str, Any]:
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if key is not None:
        headers.append((b"authorization", f"Bearer {key}".encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
        "scheme": "http",
        "method": "POST",
        "root_path": "",
        "path": "/graphql",
        "raw_path": b"/graphql",
        "query_string": b"",
        "headers": headers,
    }


async def asgi_request(app: Any, body: bytes, key: str | None) -> None:
    """POST ``body`` to ``/graphql`` as the server would call ``app``, with
    ``key`` as its Bearer key; an answer other than 200 without errors raises."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(_scope(body, key), receive, send)
    assert sent[0]["status"] == 200, sent
    assert b'"errors"' not in sent[-1]["body"], sent[-1]["body"][:300]


# The page's execution phase.


async def _count(executor: str, library: Path, directory: Path) -> float:
    arguments = (executor, str(EXECUTIONS))
    out = directory / f"{executor}.out"
    (count,) = await counted("bench._instructions", arguments, library, out, 1, EXECUTIONS)
    return count


async def print_instructions() -> None:
    title = (
        "execution: the page's execution phase in instructions per execution "
        f"(callgrind, {EXECUTIONS} executions after {WARMUP}; deterministic, unlike the clock)"
    )
    header = ("executor", "instructions", "")
    with counting(title, header) as built:
        if built is None:
            return
        directory, library = built
        counts = {
            executor: await _count(executor, library, directory)
            for executor in ("compiled", "graphql-core")
        }
    rows = [(executor, f"{count:,.0f}", "") for executor, count in counts.items()]
    ratio = counts["graphql-core"] / counts["compiled"]
    rows.append(("graphql-core / compiled", f"{ratio:.2f}x", "(bar: >= 3x)"))
    print_table(title, rows, header)


async def _run(executor: str, executions: int, library: str) -> None:
    from graphql import parse

    from .execution import PAGE, execute_page, seeded

    async with seeded() as (schemas, arguments):
        schema, document = schemas[executor], parse(PAGE)

        async def execution() -> None:
            await execute_page(schema, document, *arguments)

        await count_requests(library, [execution], warmup=WARMUP, requests=executions)


if __name__ == "__main__":
    asyncio.run(_run(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
