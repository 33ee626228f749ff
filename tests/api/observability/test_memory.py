"""GET /debug/memory: the allocation sites that grew, for the operator, only
while allocations are traced (PROOFGATE_TRACEMALLOC_FRAMES)."""

from __future__ import annotations

import inspect
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from _asgi import ADMIN_KEY, GraphQLClient, environment, serving

from api.observability.memory import start_tracing
from api.settings.gateway import Settings
from domain.errors import ConfigurationError

OPERATOR = {"Authorization": f"Bearer {ADMIN_KEY}"}
HELD: list[bytearray] = []


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[GraphQLClient]:
    async with serving(tmp_path) as served:
        yield served


@pytest.fixture
def traced() -> Iterator[None]:
    assert not tracemalloc.is_tracing()
    assert start_tracing(1)
    try:
        yield
    finally:
        tracemalloc.stop()
        HELD.clear()


def _hold(blocks: int) -> int:
    """Keeps ``blocks`` KiB alive; the line that allocates them."""
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    HELD.extend(bytearray(1024) for _ in range(blocks))
    return line


def _grown(report: str) -> dict[str, int]:
    """``file:line`` -> bytes grown, from the report's site lines."""
    sites = {}
    for line in report.splitlines():
        if line and not line.startswith(("#", " ")):
            size_diff, _, _, _, site = line.split(" ", 4)
            sites[site] = int(size_diff)
    return sites


async def test_the_second_report_names_the_site_that_grew(
    client: GraphQLClient, traced: None
) -> None:
    first = await client.http.get("/debug/memory", headers=OPERATOR)
    assert first.status_code == 200
    assert first.text.startswith("# traced ")
    line = _hold(2000)
    second = await client.http.get("/debug/memory", headers=OPERATOR, params={"limit": "5"})
    grown = _grown(second.text)
    assert "since the previous report" in second.text
    assert len(grown) <= 5
    site = f"{__file__}:{line}"
    assert grown[site] >= 2000 * 1024
    assert max(grown, key=grown.__getitem__) == site
    # Nothing held since: the site is no longer among those that grew.
    third = await client.http.get("/debug/memory", headers=OPERATOR)
    assert _grown(third.text).get(site, 0) <= 0


async def test_the_traceback_grouping_names_the_callers(
    client: GraphQLClient, traced: None
) -> None:
    await client.http.get("/debug/memory", headers=OPERATOR)
    line = _hold(500)
    report = await client.http.get("/debug/memory", headers=OPERATOR, params={"by": "traceback"})
    assert f"{__file__}:{line}" in report.text


async def test_only_the_operator_reads_it(client: GraphQLClient, traced: None) -> None:
    anonymous = await client.http.get("/debug/memory")
    assert anonymous.status_code == 403
    assert client.codes(anonymous.json()) == ["FORBIDDEN"]
    wrong = await client.http.get("/debug/memory", headers={"Authorization": "Bearer wrong-key"})
    assert wrong.status_code == 401
    assert (await client.http.get("/debug/memory", headers=OPERATOR)).status_code == 200


async def test_untraced_it_answers_the_totals_and_how_to_list_sites(
    client: GraphQLClient,
) -> None:
    assert not tracemalloc.is_tracing()
    response = await client.http.get("/debug/memory", headers=OPERATOR)
    assert response.status_code == 200
    lines = response.text.splitlines()
    assert all(line.startswith("# ") for line in lines)
    assert any(line.startswith("# gc ") for line in lines)
    # Each of malloc's arenas and pymalloc's (tests/api/observability/test_allocators.py).
    assert any(line.startswith("#   arena 0: ") for line in lines)
    assert any(line.startswith("# pymalloc ") for line in lines)
    assert "PROOFGATE_TRACEMALLOC_FRAMES" in lines[-1]
    assert not any(line.startswith("# traced ") for line in lines)


@pytest.mark.parametrize(
    "query", [{"by": "size"}, {"limit": "0"}, {"limit": "201"}, {"limit": "ten"}]
)
async def test_bad_parameters_are_refused(
    client: GraphQLClient, traced: None, query: dict[str, str]
) -> None:
    response = await client.http.get("/debug/memory", headers=OPERATOR, params=query)
    assert response.status_code == 400
    assert client.codes(response.json()) == ["BAD_USER_INPUT"]


def test_the_setting_is_off_by_default_and_counts_frames(tmp_path: Path) -> None:
    assert Settings.from_env(environment(tmp_path)).tracemalloc_frames == 0
    assert not start_tracing(0)
    assert not tracemalloc.is_tracing()
    on = environment(tmp_path, PROOFGATE_TRACEMALLOC_FRAMES="8")
    assert Settings.from_env(on).tracemalloc_frames == 8
    off = environment(tmp_path, PROOFGATE_TRACEMALLOC_FRAMES="off")
    assert Settings.from_env(off).tracemalloc_frames == 0
    with pytest.raises(ConfigurationError, match="PROOFGATE_TRACEMALLOC_FRAMES"):
        Settings.from_env(environment(tmp_path, PROOFGATE_TRACEMALLOC_FRAMES="-1"))
