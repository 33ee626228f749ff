"""``proofgate outbox``: parked items are listed and can be put back."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from api.cli.main import main
from api.settings.gateway import Settings
from services.pipeline import PipelineSettings, RecallEvent
from services.pipeline.outbox.items import outbox_put, park_update
from storage.access_patterns import OUTBOX_DUE
from storage.sqlite import open_sqlite

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


async def _park(path: Path, event: RecallEvent) -> None:
    storage = await open_sqlite(path, cursor_key=bytes(32))
    try:
        put = outbox_put(event, now=T0, settings=PipelineSettings())
        await storage.transact_write([put])
        await storage.transact_write(
            [park_update(event.event_id, now=T0, error="HTTP 503", sort=put.item["GSI2SK"])]
        )
    finally:
        await storage.close()


async def _ready(path: Path) -> list[str]:
    storage = await open_sqlite(path, cursor_key=bytes(32))
    try:
        ids = []
        for shard in PipelineSettings().shards:
            page = await storage.query(
                OUTBOX_DUE, {"shard": shard, "before": datetime(9999, 1, 1, tzinfo=UTC)}, tenant="t"
            )
            ids += [item["id"] for item in page.items]
        return ids
    finally:
        await storage.close()


def test_parked_items_are_listed_and_requeued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROOFGATE_ADMIN_KEY", "outbox-command-admin-key")
    settings = Settings.from_env(
        {"PROOFGATE_DATA_DIR": str(tmp_path), "PROOFGATE_ADMIN_KEY": "outbox-command-admin-key"}
    )
    path = Path(settings.sqlite_path)
    event = RecallEvent("P1", "B1", T0, None)
    asyncio.run(_park(path, event))

    assert main(["outbox", "--parked", "--json", "--data-dir", str(tmp_path)]) == 0
    [line] = capsys.readouterr().out.splitlines()
    listed = json.loads(line)
    assert (listed["id"], listed["kind"], listed["lastError"]) == (
        "recall:P1",
        "RECALL",
        "HTTP 503",
    )

    assert main(["outbox", "--requeue", "recall:P1", "--data-dir", str(tmp_path)]) == 0
    assert asyncio.run(_ready(path)) == ["recall:P1"]
    assert main(["outbox", "--parked", "--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "requeued recall:P1\n"
    assert main(["outbox", "--requeue", "recall:P1", "--data-dir", str(tmp_path)]) == 1
    assert "No parked outbox item" in capsys.readouterr().err
