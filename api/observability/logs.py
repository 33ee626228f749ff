"""The process's log lines: readable text by default, one JSON object per
line with ``PROOFGATE_LOG_FORMAT=json``, for uvicorn's loggers and ours alike.

A line's structured fields travel in ``extra={"fields": {...}}``; the text
format appends them as ``key=value``, the JSON format as keys of the object.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

__all__ = ["JsonFormatter", "LogFormat", "LogLevel", "TextFormatter", "logging_config"]


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


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = " ".join(f"{key}={value}" for key, value in _fields(record).items())
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
