"""Idempotency records (AP18): a retried mutation returns its first result.

A record holds the request's fingerprint and its result (ids, never objects:
the objects are read fresh on replay). The same key with another body is
CONFLICT. Records expire after ``IDEMPOTENCY_TTL``; the TTL attribute only
schedules deletion, so reads and the conditional create check expiry
themselves.

A mutation whose writes span several transactions writes its record PENDING
in the first one and completes it in the last, so a retry after a failure in
between finds the ids it planned and resumes rather than starting again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from domain.datetimes import format_datetime
from domain.errors import Conflict
from domain.idempotency import request_fingerprint
from domain.validation import IDEMPOTENCY_KEY
from storage import Any_, Compare, Comparison, Item, ItemAbsent, Put, Update
from storage.access_patterns import IDEMPOTENCY_RECORD

from .context import Reads

__all__ = ["IDEMPOTENCY_TTL", "Idempotency", "RecordStatus"]

IDEMPOTENCY_TTL = timedelta(hours=24)


class RecordStatus(StrEnum):
    PENDING = "PENDING"
    COMPLETE = "COMPLETE"


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


@dataclass(frozen=True)
class Idempotency:
    scope: str
    key: str
    fingerprint: str

    @classmethod
    def of(cls, key: str | None, *, scope: str, operation: str, body: object) -> Idempotency | None:
        """None when the caller sent no key. ``scope`` is the tenant the key
        belongs to, so two brands may use the same key independently."""
        if key is None:
            return None
        return cls(scope, IDEMPOTENCY_KEY(key), request_fingerprint(operation, body))

    @property
    def _params(self) -> dict[str, str]:
        return {"scope": self.scope, "key": self.key}

    async def lookup(self, loaders: Reads, now: datetime, *, fresh: bool = False) -> Item | None:
        """The live record of an earlier request with this key, or None.
        CONFLICT when that request had another body."""
        if fresh:
            loaders.forget(IDEMPOTENCY_RECORD, **self._params)
        record = await loaders.item(IDEMPOTENCY_RECORD, **self._params)
        if record is None or record.get("expiresAt", 0) <= _epoch(now):
            return None
        if record["fingerprint"] != self.fingerprint:
            raise Conflict(
                "idempotencyKey was already used for a different request",
                hint="Send a new idempotencyKey for a new request; reuse a key only to retry.",
            )
        return record

    def create(
        self, now: datetime, result: Mapping[str, Any], status: RecordStatus = RecordStatus.COMPLETE
    ) -> Put:
        key = IDEMPOTENCY_RECORD.key(**self._params)
        return Put(
            {
                "PK": key.pk,
                "SK": key.sk,
                "entity": "IdempotencyRecord",
                "fingerprint": self.fingerprint,
                "status": status.value,
                "result": dict(result),
                "createdAt": format_datetime(now),
                "expiresAt": _epoch(now + IDEMPOTENCY_TTL),
            },
            Any_(ItemAbsent(), Compare("expiresAt", Comparison.LE, _epoch(now))),
        )

    def complete(self, result: Mapping[str, Any]) -> Update:
        return Update(
            IDEMPOTENCY_RECORD.key(**self._params),
            set={"status": RecordStatus.COMPLETE.value, "result": dict(result)},
            condition=Compare("fingerprint", Comparison.EQ, self.fingerprint),
        )
