"""Provenance chains built the way appends build them, one event on the head of the last."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from domain.chain import ChainHead, ProvenanceEvent, next_event
from domain.enums import ProvenanceEventType

__all__ = ["shipped_chain"]


def shipped_chain(
    certificate_hash: str,
    length: int,
    *,
    start: datetime,
    actor: str,
    location: str,
    latitude: Decimal,
    longitude: Decimal,
    data: Callable[[int], dict[str, Any]],
) -> list[ProvenanceEvent]:
    """``length`` SHIPPED events an hour apart; the n-th (from 0) has actor
    ``f"{actor} {n}"`` and data ``data(n)``."""
    head = ChainHead.genesis(certificate_hash)
    events = []
    for n in range(length):
        event = next_event(
            head,
            type=ProvenanceEventType.SHIPPED,
            occurred_at=start + timedelta(hours=n),
            actor=f"{actor} {n}",
            location=location,
            latitude=latitude,
            longitude=longitude,
            data=data(n),
        )
        events.append(event)
        head = ChainHead.of(event)
    return events
