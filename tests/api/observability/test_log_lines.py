"""The preformatted request line is the line the configured formatter writes.

Each format's line for the same fields at the same instant is compared with
``TextFormatter`` / ``JsonFormatter`` formatting a ``logging`` record, over
instants at the edges of a second and fields of every kind a request line
holds; a fault planted in the fast formatting must fail the comparison.
Lines of one loop turn are written together at its end, at most
``MAX_PENDING`` held; with a handler that is not ours, each line is a record.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import api.observability.log_lines
from api.observability.log_lines import FLUSH_SECONDS, MAX_PENDING, RequestLines
from api.observability.logs import JsonFormatter, TextFormatter

INSTANTS = [1_700_000_000.0, 1_700_000_000.0004, 1_700_000_000.9996, 1_764_590_000.5, 86_399.999]
FIELDS: list[dict[str, Any]] = [
    {
        "requestId": "lb-7f3a.42",
        "method": "POST",
        "path": "/graphql",
        "status": 200,
        "durationMs": 1.25,
        "operationName": None,
        "operationType": "query",
        "principal": "ANONYMOUS",
        "errorCodes": [],
        "storageCalls": 0,
        "capacityUnits": 0.0,
    },
    {"operationName": 'Naïve "quoted"', "errorCodes": ["NOT_FOUND", "INTERNAL"], "status": 500},
    {},
]


def _logger(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    """A ``.request`` logger whose parent holds the handler, as ``logging_config`` sets
    up ``proofgate`` and ``proofgate.request``."""
    parent = logging.getLogger(f"proofgate.test_lines.{uuid.uuid4().hex}")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    parent.addHandler(handler)
    parent.setLevel(logging.INFO)
    parent.propagate = False
    return logging.getLogger(f"{parent.name}.request"), stream


def _cases() -> Iterator[tuple[float, dict[str, Any], int]]:
    for instant in INSTANTS:
        for fields in FIELDS:
            for level in (logging.INFO, logging.DEBUG):
                yield instant, fields, level


def _compare(formatter: logging.Formatter, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    mismatches = []
    logger, stream = _logger(formatter)
    logger.setLevel(logging.DEBUG)
    lines = RequestLines(logger)
    for instant, fields, level in _cases():
        monkeypatch.setattr(time, "time", lambda instant=instant: instant)
        record = logger.makeRecord(
            logger.name, level, "", 0, "request", (), None, extra={"fields": fields}
        )
        expected = formatter.format(record) + "\n"
        lines.write(level, fields)  # no running loop: written at once
        monkeypatch.undo()
        written = stream.getvalue()
        stream.seek(0)
        stream.truncate()
        if written != expected:
            mismatches.append(f"{written!r} != {expected!r}")
    return mismatches


@pytest.mark.parametrize("formatter", [TextFormatter, JsonFormatter])
def test_each_format_writes_the_formatters_line(
    formatter: type[logging.Formatter], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _compare(formatter(), monkeypatch) == []


@pytest.mark.parametrize("formatter", [TextFormatter, JsonFormatter])
def test_a_fault_planted_in_the_fast_line_is_caught(
    formatter: type[logging.Formatter], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = RequestLines
    if formatter is TextFormatter:
        monkeypatch.setattr(api.observability.log_lines, "_pairs", lambda fields: "")
    else:
        monkeypatch.setattr(lines, "_json", lambda self, created, level, fields: "{}")
    mismatches = _compare(formatter(), pytest.MonkeyPatch())
    assert mismatches


async def test_lines_are_written_together_once_the_first_has_waited() -> None:
    logger, stream = _logger(TextFormatter())
    lines = RequestLines(logger)
    writes = []
    flushed = asyncio.Event()
    assert logger.parent is not None
    handler = logger.parent.handlers[0]
    original = handler.flush

    def counted() -> None:
        writes.append(stream.getvalue().count("\n"))
        original()
        flushed.set()

    handler.flush = counted  # type: ignore[method-assign]
    for index in range(3):
        lines.write(logging.INFO, {"requestId": f"r{index}"})
    await asyncio.sleep(0)
    assert stream.getvalue() == "", "held past the end of the turn"
    await asyncio.wait_for(flushed.wait(), 10 * FLUSH_SECONDS + 5)
    assert writes == [3]
    for index in range(MAX_PENDING + 1):
        lines.write(logging.INFO, {"requestId": f"s{index}"})
    assert writes == [3, 3 + MAX_PENDING], "no more than MAX_PENDING held"
    flushed.clear()
    await asyncio.wait_for(flushed.wait(), 10 * FLUSH_SECONDS + 5)
    assert writes == [3, 3 + MAX_PENDING, 3 + MAX_PENDING + 1]


async def test_lines_held_at_exit_are_written() -> None:
    logger, stream = _logger(TextFormatter())
    lines = RequestLines(logger)
    lines.write(logging.INFO, {"requestId": "r1"})
    assert stream.getvalue() == "", "held"
    lines._flush_held()  # what atexit calls
    assert stream.getvalue().endswith("request requestId=r1\n")


async def test_with_a_handler_not_ours_each_line_is_a_record() -> None:
    logger, stream = _logger(TextFormatter())
    records: list[logging.LogRecord] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger.addHandler(Capture())
    RequestLines(logger).write(logging.INFO, {"requestId": "r1"})
    (record,) = records
    assert record.getMessage() == "request" and record.fields == {"requestId": "r1"}  # type: ignore[attr-defined]
    assert stream.getvalue().endswith("request requestId=r1\n"), "written at once"
