"""The request log line in microseconds: preformatted, written in batches.

Every request writes one line (``api/observability/request_log.py``). Through
``logging`` that line cost more than the small query's execution: the caller
lookup walks the stack, the record copies a dozen attributes, the formatter
formats the time with ``strftime`` and the handler flushes its stream per line
(measured ~135 us of a small query's ~300 us in process). Here the line is built
from a prefix fixed at start-up and the time, the same text the configured
formatter writes (``TextFormatter`` or ``JsonFormatter`` of
``api/observability/logs.py``), and lines are written and flushed together
``FLUSH_SECONDS`` after the first of them: at one flush per turn of the event
loop, the write cost a small query more than its line (~20 us), since under
load a turn answers only a request or two. Lines still held when the process
exits are written then (``atexit``).

Only when the ``proofgate.request`` logger is configured as ``logging_config``
configures it (its records reach one stream handler with one of those
formatters, on it or on a parent, and no filter); otherwise (tests capturing
records, an operator's own config) each line is a ``logging`` record as
before, minus the caller lookup, which no formatter of ours prints.
``tests/api/observability/test_log_lines.py`` holds both formats to the
formatters, line for line.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import time
from datetime import UTC, datetime
from typing import Any, Protocol

from api.observability.logs import JsonFormatter, TextFormatter

__all__ = ["LineFields", "RequestLines"]

MAX_PENDING = 256
"""Lines held at most; more are written at once."""
FLUSH_SECONDS = 0.02
"""How long the first line held waits for others: a line reaches the log at
most this late, and a busy process writes a few dozen lines a write."""


_MILLISECONDS = tuple(f",{msecs:03d}" for msecs in range(1000))
"""``,`` and the milliseconds as ``%(msecs)03d`` writes them, by their value."""


class LineFields(Protocol):
    """A line's fields, for a caller that can write their text form faster
    than from the dict: ``pairs()`` must equal ``_pairs(as_dict())``."""

    def as_dict(self) -> dict[str, Any]: ...

    def pairs(self) -> str: ...


class RequestLines:
    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger
        self._seen: tuple[logging.Handler, ...] | None = None
        self._targets: list[tuple[logging.StreamHandler[Any], bool]] | None = None
        self._pending: list[str] = []
        self._held_for: logging.StreamHandler[Any] | None = None
        self._second = -1
        self._stamp = ""
        self._heads: dict[int, str] = {}

    def write(self, level: int, fields: dict[str, Any] | LineFields) -> None:
        """One line at ``level`` (the caller checked ``isEnabledFor``)."""
        targets = self._fast_targets()
        if targets is None:
            extra = {"fields": _as_dict(fields)}
            record = self.logger.makeRecord(
                self.logger.name, level, "", 0, "request", (), None, extra=extra
            )
            self.logger.handle(record)
            return
        created = time.time()
        for handler, is_json in targets:
            if level < handler.level:
                continue
            if is_json:
                line = self._json(created, logging.getLevelName(level), _as_dict(fields))
                line += handler.terminator
            else:
                # ``%(asctime)s %(levelname)s %(name)s: %(message)s`` as
                # ``logging.Formatter`` writes it: local time to the second, then
                # ``,`` and the milliseconds from a table (a format spec per line
                # cost more than the rest); inline, as a call apiece cost a tenth.
                second = int(created)
                if second != self._second:
                    self._second = second
                    self._stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
                head = self._heads.get(level) or self._head(level)
                pairs = _pairs(fields) if isinstance(fields, dict) else fields.pairs()
                milliseconds = _MILLISECONDS[int((created - second) * 1000)]
                line = f"{self._stamp}{milliseconds}{head}{pairs}{handler.terminator}"
            pending = self._pending
            if pending and len(pending) < MAX_PENDING - 1:  # a flush is due: join it
                pending.append(line)
            else:
                self._queue(handler, line)

    def _fast_targets(self) -> list[tuple[logging.StreamHandler[Any], bool]] | None:
        logger = self.logger
        if logger.filters or logger.disabled:
            return None
        # As ``logging_config`` sets it up: none of its own, its parent's one.
        parent = logger.parent
        if (
            not logger.handlers
            and logger.propagate
            and parent is not None
            and not parent.propagate
            and self._seen is not None
            and len(self._seen) == 1
            and parent.handlers == [self._seen[0]]
        ):
            return self._targets
        handlers = _handlers(logger)
        if handlers != self._seen:
            self._seen = handlers
            self._targets = _targets(handlers)
        return self._targets

    def _head(self, level: int) -> str:
        head = self._heads[level] = f" {logging.getLevelName(level)} {self.logger.name}: request"
        return head

    def _json(self, created: float, level: str, fields: dict[str, Any]) -> str:
        head = {
            "time": datetime.fromtimestamp(created, UTC).isoformat(),
            "level": level,
            "logger": self.logger.name,
            "pid": os.getpid(),
            "message": "request",
        }
        return json.dumps({**head, **fields}, default=str, ensure_ascii=False)

    def _queue(self, handler: logging.StreamHandler[Any], line: str) -> None:
        """``line``, ended by the handler's terminator, held for a flush."""
        pending = self._pending
        if not pending:
            try:
                asyncio.get_running_loop().call_later(FLUSH_SECONDS, self.flush, handler)
            except RuntimeError:  # no loop: nothing would flush it later
                pending.append(line)
                self.flush(handler)
                return
            if self._held_for is None:
                atexit.register(self._flush_held)
            self._held_for = handler
        pending.append(line)
        if len(pending) >= MAX_PENDING:
            self.flush(handler)

    def flush(self, handler: logging.StreamHandler[Any]) -> None:
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        with handler.lock or _NO_LOCK:
            try:
                handler.stream.write(text)
                handler.flush()
            except Exception:  # as StreamHandler.emit: a broken stream is no request's failure
                handler.handleError(logging.makeLogRecord({"msg": text.rstrip()}))

    def _flush_held(self) -> None:
        """At exit: a loop that stopped never runs the timer of what it held."""
        if self._held_for is not None:
            self.flush(self._held_for)


def _handlers(logger: logging.Logger) -> tuple[logging.Handler, ...]:
    """The handlers a record of ``logger`` reaches, as ``Logger.callHandlers``
    finds them: its own, then its parents' until one does not propagate.
    ``logging_config`` puts the handler on ``proofgate``."""
    handlers: list[logging.Handler] = []
    current: logging.Logger | None = logger
    while current is not None:
        handlers.extend(current.handlers)
        if not current.propagate:
            break
        current = current.parent
    return tuple(handlers)


def _targets(
    handlers: tuple[logging.Handler, ...],
) -> list[tuple[logging.StreamHandler[Any], bool]] | None:
    """The handlers to write to directly, or None when one is not ours to imitate."""
    if len(handlers) != 1:
        return None  # one batch per handler would need one queue per handler
    targets = []
    for handler in handlers:
        if type(handler) is not logging.StreamHandler or handler.filters:
            return None
        formatter = type(handler.formatter)
        if formatter not in (TextFormatter, JsonFormatter):
            return None
        targets.append((handler, formatter is JsonFormatter))
    return targets


def _as_dict(fields: dict[str, Any] | LineFields) -> dict[str, Any]:
    return fields if isinstance(fields, dict) else fields.as_dict()


def _pairs(fields: dict[str, Any]) -> str:
    extras = " ".join(f"{key}={value}" for key, value in fields.items())
    return f" {extras}" if extras else ""


class _NoLock:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_LOCK = _NoLock()
