"""The caches that fill while a process serves are bounded from settings
(docs/design.md, Memory growth): each variable is read, refused with one
line naming it, and reaches the cache it bounds in a served app."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from _asgi import running
from conftest import ADMIN_KEY, SIGNING_KEY
from graphql import ExecutionResult

from api.app import create_app
from api.graphql.execution.fanout import SharedEvents, Sharers
from api.settings.gateway import Settings
from api.settings.limits import SHARED_EVENTS, SHARED_PAYLOAD_BYTES, Limits
from domain import verdicts
from domain.errors import ConfigurationError
from services.pipeline.alerts.known import KNOWN_ALERTS_BYTES
from services.pipeline.settings import PipelineSettings

BOUNDS = {
    "PROOFGATE_VERDICT_CACHE_BYTES": "10000",
    "PROOFGATE_KNOWN_ALERTS_BYTES": "20000",
    "PROOFGATE_FANOUT_EVENTS": "7",
    "PROOFGATE_FANOUT_PAYLOAD_BYTES": "4096",
}


def test_the_defaults_and_every_variable(tmp_path: Path) -> None:
    default = Settings.from_env({"PROOFGATE_DATA_DIR": str(tmp_path)})
    assert default.verdict_cache_bytes == verdicts.VERDICT_CACHE_BYTES
    assert default.pipeline.known_alerts_bytes == KNOWN_ALERTS_BYTES
    assert default.limits.fanout_events == SHARED_EVENTS
    assert default.limits.fanout_payload_bytes == SHARED_PAYLOAD_BYTES
    read = Settings.from_env({"PROOFGATE_DATA_DIR": str(tmp_path), **BOUNDS})
    assert read.verdict_cache_bytes == 10_000
    assert read.pipeline.known_alerts_bytes == 20_000
    assert (read.limits.fanout_events, read.limits.fanout_payload_bytes) == (7, 4096)


@pytest.mark.parametrize("variable", sorted(BOUNDS))
@pytest.mark.parametrize("value", ["0", "-1", "1MB"])
def test_a_bad_bound_is_one_line_naming_its_variable(
    tmp_path: Path, variable: str, value: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"Invalid {variable}: ") as raised:
        Settings.from_env({"PROOFGATE_DATA_DIR": str(tmp_path), variable: value})
    assert "\n" not in str(raised.value)


async def test_a_served_app_bounds_its_caches_by_its_settings() -> None:
    settings = Settings(
        sqlite_path=":memory:",
        cursor_key=bytes(range(32)),
        admin_key=ADMIN_KEY,
        signing_key=SIGNING_KEY.private_key_pem().decode(),
        limits=Limits(fanout_events=7, fanout_payload_bytes=4096),
        pipeline=replace(PipelineSettings(), known_alerts_bytes=20_000),
        verdict_cache_bytes=10_000,
    )
    before = verdicts.budget()
    try:
        app = create_app(settings)
        async with running(app):
            assert verdicts.budget() == 10_000
            assert app.state.pipeline.relay.alerts.known.max_bytes == 20_000
            assert app.state.graphql.payloads.max_bytes == 4096
            executor = app.state.graphql.schema.execution_context_class
            assert executor.events.max_items == 7
    finally:
        verdicts.set_budget(before)


def test_shared_events_hold_their_count_under_many_sharers_and_events() -> None:
    """Every subscriber its own variables (a resumed ``after:``) and every
    event new: the fan-out keeps no more than its bound, the newest."""
    events = SharedEvents(max_items=16)
    sharers = [Sharers(plan=n) for n in range(50)]
    for event in range(200):
        for one in sharers:
            events.result((one, event), event, lambda: ExecutionResult({"n": 1}, None))
            assert len(events) <= 16
    assert events.answered((sharers[-1], 199), 199) is not None
    assert events.answered((sharers[0], 0), 0) is None
