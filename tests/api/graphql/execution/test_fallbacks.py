"""Every fast path's fallbacks are counted by cause and logged once per cause
(docs/design.md, Fast paths and their switches)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from _limits import serve
from prometheus_client.parser import text_string_to_metric_families

from api.observability import fallbacks
from api.settings.limits import Execution, Limits

SMALL = "{ viewer { role } }"


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, str], int]:
    """The process's counts, fresh for the test."""
    fresh: dict[tuple[str, str], int] = {}
    monkeypatch.setattr(fallbacks, "_counts", fresh)
    return fresh


def test_a_cause_is_counted_every_time_and_logged_once(
    counts: dict[tuple[str, str], int], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "proofgate.fallbacks"):
        for _ in range(3):
            fallbacks.fell_back("plan", "introspection")
        fallbacks.unexpected("projection", KeyError("sku"))
    assert counts == {("plan", "introspection"): 1 * 3, ("projection", "unexpected KeyError"): 1}
    logged = [record.getMessage() for record in caplog.records]
    assert len(logged) == 2
    assert "plan" in logged[0] and "introspection" in logged[0]
    assert caplog.records[1].exc_info is not None, "the unexpected error's traceback"


def test_causes_past_the_bound_count_as_other(counts: dict[tuple[str, str], int]) -> None:
    for number in range(fallbacks.MAX_CAUSES + 5):
        fallbacks.fell_back("fused", f"cause {number}")
    assert len(counts) == fallbacks.MAX_CAUSES + 1
    assert counts[("fused", fallbacks.OTHER_CAUSE)] == 5


def _fallbacks(app: Any) -> dict[tuple[str, str], float]:
    text = app.state.metrics.render().decode()
    [family] = [
        f for f in text_string_to_metric_families(text) if f.name == "proofgate_fast_path_fallbacks"
    ]
    return {(s.labels["lane"], s.labels["cause"]): s.value for s in family.samples}


@pytest.mark.usefixtures("counts")
async def test_a_request_that_leaves_a_lane_shows_in_the_metrics() -> None:
    """The positive control first: the same query, sent plainly, falls back
    from nothing once its document is known."""
    async with serve(Limits(execution=Execution.COMPILED)) as client:
        await client.data(SMALL)  # the document validated: the lane's from now on
        before = _fallbacks(client.app)
        await client.data(SMALL)
        assert _fallbacks(client.app) == before
        body = {"query": SMALL, "extensions": {"note": 1}}
        answered = await client.http.post("/graphql", json=body)
        assert answered.status_code == 200 and "errors" not in answered.json()
        headers = {"content-type": "application/json; charset=utf-8"}
        answered = await client.http.post(
            "/graphql", content=b'{"query": "%s"}' % SMALL.encode(), headers=headers
        )
        assert answered.status_code == 200 and "errors" not in answered.json()
        introspection = await client.data("{ __schema { queryType { name } } }")
        assert introspection == {"__schema": {"queryType": {"name": "Query"}}}
        after = _fallbacks(client.app)
    assert after[("prepared", "extensions or other fields")] == 1
    assert after[("entry", "content type not exactly application/json")] == 1
    assert after[("plan", "introspection")] == 1, "counted once, though tried by two paths"


async def test_without_the_lanes_nothing_falls_back(
    counts: dict[tuple[str, str], int],
) -> None:
    async with serve(Limits(execution=Execution.LIBRARY)) as client:
        for _ in range(2):
            assert await client.data(SMALL) == {"viewer": {"role": "ANONYMOUS"}}
        assert await client.data("{ __schema { queryType { name } } }")
    assert counts == {}
