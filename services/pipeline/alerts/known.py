"""Alert keys this process knows are stored, so a scan whose draft repeats
one is not written again only to fail its conditional create.

Once a product has crossed a rule's threshold, every further scan in the
rule's window drafts the same alert (a burst stays a burst); without this,
each of them costs the relay a transaction that the store refuses. Alerts
are never deleted, so a key once seen stored stays stored: remembering it
changes what is written by nothing, only what is attempted. Bounded in
bytes (FIFO, ``PROOFGATE_KNOWN_ALERTS_BYTES``), so it is full after minutes
of new alerts rather than an hour (docs/design.md, Memory growth); a
forgotten key only costs the refused write again (docs/design.md, "Verify path").
"""

from __future__ import annotations

from datetime import datetime

from domain.enums import ThreatType
from domain.threats import AlertKey

__all__ = ["KEY_OVERHEAD", "KNOWN_ALERTS_BYTES", "KnownAlerts"]

KNOWN_ALERTS_BYTES = 256 * 1024
"""~650 keys: a rule window's alerts of a busy process."""
KEY_OVERHEAD = 340
"""What a key costs besides its ids' characters: the key, its window's
datetime, the ids' headers, its slot here and in ``_latest`` (tracemalloc:
~385 bytes a key with two 26-character ids)."""


def _size(key: AlertKey) -> int:
    return KEY_OVERHEAD + len(key.brand_id) + len(key.product_id)


class KnownAlerts:
    def __init__(self, max_bytes: int = KNOWN_ALERTS_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._keys: dict[AlertKey, None] = {}
        self._latest: dict[tuple[str, str, ThreatType], datetime] = {}
        """The latest window start known stored of each product's alert
        type, among ``_keys``: a scan in that window repeats the alert, and
        telling so is two comparisons instead of spelling and hashing its
        key (``services/pipeline/alerts/drafts.py``)."""

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def latest(self, brand_id: str, product_id: str, type_: ThreatType) -> datetime | None:
        """The latest window start of the product's alerts of ``type_`` known
        to be stored; None if none is (or it was forgotten)."""
        return self._latest.get((brand_id, product_id, type_))

    def add(self, key: AlertKey) -> None:
        if key in self._keys:
            return
        size = _size(key)
        if size > self.max_bytes:
            return
        self.bytes += size
        while self.bytes > self.max_bytes:
            self._forget_oldest()
        self._keys[key] = None
        slot = (key.brand_id, key.product_id, key.type)
        latest = self._latest.get(slot)
        if latest is None or key.window_start > latest:
            self._latest[slot] = key.window_start

    def _forget_oldest(self) -> None:
        oldest = next(iter(self._keys))
        del self._keys[oldest]
        self.bytes -= _size(oldest)
        slot = (oldest.brand_id, oldest.product_id, oldest.type)
        if self._latest.get(slot) == oldest.window_start:
            # An older window of the slot may remain; not knowing it
            # only costs its rule's run.
            del self._latest[slot]
