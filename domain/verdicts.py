"""Remembered verdicts of signature checks, within a byte budget.

A product is verified again and again with one certificate, and an Ed25519
check costs more than the rest of a verification's CPU together, so its
verdict is remembered: by bytes (``domain.signing``) and by the stored text
(``domain.certificates``), least recently used out first. The budget is in
bytes, counted from each key's parts plus what an entry costs besides
(``ENTRY_OVERHEAD``), so a process holds what the operator set
(``PROOFGATE_VERDICT_CACHE_BYTES``) whatever the certificates hold, and
reaches it within minutes of new products rather than an hour
(docs/design.md, Memory growth).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["ENTRY_OVERHEAD", "VERDICT_CACHE_BYTES", "Verdicts", "budget", "set_budget"]

VERDICT_CACHE_BYTES = 512 * 1024
"""Both memos together: half each, ~700 certificates' verdicts each."""
ENTRY_OVERHEAD = 250
"""What an entry costs besides its parts' bytes: the dict's slot, the key's
tuple and the parts' object headers (measured with tracemalloc: 230 to 250)."""

Key = tuple[bytes | str, ...]


class Verdicts:
    """Verdicts by key, least recently used first out, within ``max_bytes``."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: dict[Key, tuple[bool, int]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def verdict(self, key: Key, check: Callable[[], bool]) -> bool:
        """The remembered verdict on ``key``, else ``check()``'s, remembered."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self._entries[key] = entry  # most recently used
                return entry[0]
        holds = check()
        size = ENTRY_OVERHEAD + sum(len(part) for part in key)
        with self._lock:
            if size <= self.max_bytes and key not in self._entries:
                self._entries[key] = (holds, size)
                self.bytes += size
                self._shrink()
        return holds

    def resize(self, max_bytes: int) -> None:
        with self._lock:
            self.max_bytes = max_bytes
            self._shrink()

    def _shrink(self) -> None:
        entries = self._entries
        while self.bytes > self.max_bytes:
            _, size = entries.pop(next(iter(entries)))
            self.bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


BY_BYTES = Verdicts(VERDICT_CACHE_BYTES // 2)
"""Verdicts by the key's raw bytes, the signature and the message."""
BY_TEXT = Verdicts(VERDICT_CACHE_BYTES // 2)
"""Verdicts by the key's raw bytes and a certificate's stored text."""


def set_budget(max_bytes: int) -> None:
    """What both memos may hold together; the process's setting."""
    BY_BYTES.resize(max_bytes // 2)
    BY_TEXT.resize(max_bytes - max_bytes // 2)


def budget() -> int:
    return BY_BYTES.max_bytes + BY_TEXT.max_bytes
