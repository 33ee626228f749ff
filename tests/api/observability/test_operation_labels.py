"""Operation-name labels an anonymous client cannot exhaust (issue 27, row 13)."""

from __future__ import annotations

from _limits import ADMIN_KEY, serve

from api.observability.metrics import Metrics
from api.observability.observation import Observation


def _observe(metrics: Metrics, name: str, principal: str) -> None:
    metrics.observe(
        Observation("id", operation_name=name, operation_type="query", principal=principal),
        200,
        0.01,
    )


def test_row13_anonymous_names_take_no_slot() -> None:
    metrics = Metrics(max_operation_names=2, registered={"Registered"})
    for n in range(10):
        _observe(metrics, f"Flood{n}", "ANONYMOUS")
    _observe(metrics, "Registered", "ANONYMOUS")
    _observe(metrics, "Mine", "BRAND")
    text = metrics.render().decode()
    assert 'operation="Flood0"' not in text
    assert 'operation="other"' in text
    assert 'operation="Registered"' in text
    assert 'operation="Mine"' in text


async def test_row13_an_anonymous_flood_leaves_the_slots_to_keyed_callers() -> None:
    """Through the app: 120 anonymous names (more than the 100 slots), then
    one sent with a key still gets its own series."""
    async with serve() as gateway:
        for n in range(120):
            await gateway.post(f"query Flood{n} {{ health {{ status }} }}")
        await gateway.post("query Dashboard { health { status } }", key=ADMIN_KEY)
        scrape = await gateway.http.get(
            "/metrics", headers={"Authorization": f"Bearer {ADMIN_KEY}"}
        )
    assert 'operation="Flood0"' not in scrape.text
    assert (
        'proofgate_requests_total{operation="other",outcome="ok",type="query"} 120.0' in scrape.text
    )
    assert 'operation="Dashboard"' in scrape.text
