"""The process's log lines: readable text by default, one JSON object per
line with ``PROOFGATE_LOG_FORMAT=json``, for uvicorn's loggers and ours alike.

A line's structured fields travel in ``extra={"fields": {...}}``; the text
format appends them as ``key=value``, the JSON format as keys of the object.

What a client sent reaches log lines (an operation name, a path), so the text
format escapes control characters in the message and the fields (a line feed
cannot forge a line) and cuts each to ``TEXT_MAX_CHARS``; the JSON format is
escaped by JSON itself. A traceback keeps its lines.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

__all__ = [
    "TEXT_MAX_CHARS",
    "JsonFormatter",
    "LogFormat",
    "LogLevel",
    "TextFormatter",
    "escaped",
    "logging_config",
]


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields: dict[str, Any] = getattr(record, "fields", None) or {}
    return fields


TEXT_MAX_CHARS = 2048
_CONTROL = {code: f"\\x{code:02x}" for code in (*range(32), *range(127, 160), 0x2028, 0x2029)}
"""C0 and C1 controls (NEL among them) and the Unicode line separators."""


def escaped(value: object, limit: int = TEXT_MAX_CHARS) -> str:
    """``value`` on one line: control characters as ``\\xNN``, at most ``limit`` characters."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    return text.translate(_CONTROL)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = escaped(record.message)
        return super().formatMessage(record)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = _fields(record).items()
        extras = " ".join(f"{key}={escaped(value, 256)}" for key, value in fields)
        return f"{line} {extras}" if extras else line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            # `serve --workers N` writes N processes' lines into one stream.
            "pid": record.process,
            "message": record.getMessage(),
            **_fields(record),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


def logging_config(log_format: LogFormat, log_level: LogLevel) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for uvicorn's ``log_config``: one
    handler on stderr for every logger, in the chosen format."""
    level = log_level.value.upper()
    formatter = JsonFormatter if log_format is LogFormat.JSON else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"default": {"()": f"{formatter.__module__}.{formatter.__name__}"}},
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "formatter": "default",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "proofgate": {"handlers": ["default"], "level": level, "propagate": False},
        },
    }
