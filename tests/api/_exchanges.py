"""What the differential tests of two paths to one answer compare: a
response, and the fields of the request log line it wrote."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["Exchange", "RequestLines", "request_lines"]


@dataclass(frozen=True)
class Exchange:
    status: int
    headers: tuple[tuple[str, str | None], ...]
    body: str
    log: tuple[tuple[str, Any], ...]


class RequestLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.fields: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.fields.append(dict(getattr(record, "fields", {})))


@contextmanager
def request_lines() -> Iterator[RequestLines]:
    """The ``proofgate.request`` lines written inside the block."""
    logger = logging.getLogger("proofgate.request")
    lines, level = RequestLines(), logger.level
    logger.addHandler(lines)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)
