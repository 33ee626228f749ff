"""The page's execution phase counted in instructions, under callgrind.

A clock on a shared two-core machine moves with everything else that runs
(other processes, the host's other guests); an instruction count does not.
``python -m bench._instructions EXECUTOR COUNT LIBRARY`` seeds the in-process
gateway of ``bench.execution``, warms the executor up, and runs the page's
execution phase COUNT times between two callgrind client requests, made
through a three-line C library compiled for the run (``cc``, valgrind's
headers). Start-up and seeding run uninstrumented, so the section takes
about a minute. Without valgrind or a C compiler the table says so.

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
from pathlib import Path

from ._harness import CC, print_table

__all__ = ["print_instructions"]

EXECUTIONS = 40
WARMUP = 20
"""Executions before the counted ones: plans compiled, caches warm."""

_CLIENT = """#include <valgrind/callgrind.h>
void measure_start(void) {
    CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT;
}
void measure_stop(void) {
    CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT("measured"); CALLGRIND_STOP_INSTRUMENTATION;
}
"""


def _client(directory: Path) -> Path | str:
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


async def _count(executor: str, library: Path, directory: Path) -> float:
    out = directory / f"{executor}.out"
    process = await asyncio.create_subprocess_exec(
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        "--collect-atstart=no",
        f"--callgrind-out-file={out}",
        sys.executable,
        "-m",
        "bench._instructions",
        executor,
        str(EXECUTIONS),
        str(library),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await process.communicate()
    dumped = Path(f"{out}.1")
    if process.returncode != 0 or not dumped.exists():
        raise RuntimeError(f"callgrind run failed: {stderr.decode(errors='replace')[-500:]}")
    for line in dumped.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1]) / EXECUTIONS
    raise RuntimeError(f"no instruction total in {dumped}")


async def print_instructions() -> None:
    title = (
        "execution: the page's execution phase in instructions per execution "
        f"(callgrind, {EXECUTIONS} executions after {WARMUP}; deterministic, unlike the clock)"
    )
    header = ("executor", "instructions", "")
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        library = _client(directory)
        if isinstance(library, str):
            print_table(title, [("skipped", library, "")], header)
            return
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

    measure = ctypes.CDLL(library)
    async with seeded() as (schemas, arguments):
        schema, document = schemas[executor], parse(PAGE)
        for _ in range(WARMUP):
            await execute_page(schema, document, *arguments)
        measure.measure_start()
        for _ in range(executions):
            await execute_page(schema, document, *arguments)
        measure.measure_stop()


if __name__ == "__main__":
    asyncio.run(_run(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
