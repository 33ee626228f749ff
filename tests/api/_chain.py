"""The provenance event hash as a third party recomputes it from the API's
answer, with nothing but the standard library: an oracle independent of
``domain.canonical``."""

from __future__ import annotations

import hashlib
import json
from decimal import Decimal
from typing import Any

__all__ = ["offline_hash"]


def offline_hash(event: dict[str, Any]) -> str:
    """The hashed fields of ``event``; ``source`` only when the event has one."""

    def coordinate(value: float | None) -> str | None:
        return None if value is None else format(Decimal(repr(value)).normalize(), "f")

    content = {
        "actor": event["actor"],
        "data": event["data"],
        "latitude": coordinate(event["latitude"]),
        "location": event["location"],
        "longitude": coordinate(event["longitude"]),
        "occurredAt": event["occurredAt"],
        "previousHash": event["previousHash"],
        "sequence": event["sequence"],
        "type": event["type"],
    }
    if event.get("source") is not None:
        content["source"] = event["source"]
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
