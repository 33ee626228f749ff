"""Starting and stopping this process's threat pipeline with the app.

Every gateway process runs a relay (so outbox items are processed wherever
gateways run, and a dead process's leases are taken over) and a tailer (so
its subscribers see alerts other processes write).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

from api.settings.gateway import Settings
from services.context import utcnow
from services.pipeline import Pipeline
from services.webhooks.selections import WebhookSelections
from storage import CursorCodec, Storage
from storage.cache import CachedStorage

__all__ = ["build_pipeline", "running_pipeline"]


def build_pipeline(
    settings: Settings,
    storage: Storage,
    *,
    on_delivery: Callable[[str], None] | None = None,
    on_redis_outage: Callable[[], None] | None = None,
    selections: WebhookSelections | None = None,
) -> Pipeline:
    """This process's pipeline, built before the services so that they are
    built with its committing storage (``build_services``)."""
    return Pipeline(
        storage,
        settings.pipeline,
        # docs/design.md, Storage cache: the relay reads what the scan it
        # handles just wrote; through the cache every such read would miss.
        relay_storage=storage.reads_around() if isinstance(storage, CachedStorage) else None,
        cursors=CursorCodec(settings.cursor_key),
        clock=utcnow,
        on_delivery=on_delivery,
        on_redis_outage=on_redis_outage,
        selections=selections,
    )


@contextlib.asynccontextmanager
async def running_pipeline(pipeline: Pipeline) -> AsyncIterator[Pipeline]:
    await pipeline.start()
    try:
        yield pipeline
    finally:
        await pipeline.stop()
