"""Alert keys this process knows are stored, so a scan whose draft repeats
one is not written again only to fail its conditional create.

Once a product has crossed a rule's threshold, every further scan in the
rule's window drafts the same alert (a burst stays a burst); without this,
each of them costs the relay a transaction that the store refuses. Alerts
are never deleted, so a key once seen stored stays stored: remembering it
changes what is written by nothing, only what is attempted. Bounded (FIFO);
a forgotten key only costs the refused write again
(docs/design.md, "Verify path").
"""

from __future__ import annotations

from domain.threats import AlertKey

__all__ = ["KNOWN_ALERTS_MAX", "KnownAlerts"]

KNOWN_ALERTS_MAX = 4096
"""A window's worth of alerts of a busy process; 4,096 keys are ~1 MB."""


class KnownAlerts:
    def __init__(self, limit: int = KNOWN_ALERTS_MAX) -> None:
        self._limit = limit
        self._keys: dict[AlertKey, None] = {}

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, key: AlertKey) -> None:
        if key in self._keys:
            return
        if len(self._keys) >= self._limit:
            del self._keys[next(iter(self._keys))]
        self._keys[key] = None
