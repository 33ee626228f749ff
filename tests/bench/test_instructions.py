"""``bench/_instructions.py``: a counted child's dumps read back per request.

A child counts two shapes, the second doing a hundred times the first's
work; the counts come back in order, per request, and keep that ratio
roughly, so a harness that read the wrong dump, divided by the wrong number
or counted the warm-up would fail.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from bench._instructions import client_library, counted

_CHILD = """
import asyncio, sys
from bench._instructions import count_requests

async def small():
    sum(range(100))

async def large():
    sum(range(10_000))

asyncio.run(count_requests(sys.argv[-1], [small, large], warmup=3, requests=5))
"""


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_each_shape_is_counted_per_request_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = client_library(tmp_path)
    if isinstance(library, str):
        pytest.skip(library)
    (tmp_path / "counted_child.py").write_text(_CHILD)
    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}:{root}")
    small, large = asyncio.run(counted("counted_child", (), library, tmp_path / "child.out", 2, 5))
    assert 0 < small < large
    # sum(range(n)) costs ~n iterations: the 100x more work shows, within slack
    # for the call's own cost.
    assert 50 < large / small < 200
