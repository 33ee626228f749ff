"""The one textual form of a timestamp.

Certificates hash ``createdAt`` and provenance events hash ``occurredAt``
"exactly as the API returns it", so the API, the hashes and anyone verifying
offline must agree on a single spelling: UTC, a literal ``Z``, always six
fractional digits (``2026-11-29T12:00:00.123456Z``). Fixed width also makes the
strings sort in time order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, TypeAlias

import msgspec

from domain.errors import BadUserInput

__all__ = ["DATETIME_FORMAT", "AwareDatetime", "format_datetime", "parse_datetime", "utc"]

DATETIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"

AwareDatetime: TypeAlias = Annotated[datetime, msgspec.Meta(tz=True)]
"""A datetime msgspec refuses to decode without a zone, as ``utc`` refuses one."""


def utc(value: datetime, *, field: str = "datetime") -> datetime:
    """Convert to UTC, refusing naive datetimes, whose instant is unknowable."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise BadUserInput(
            f"{field}: timestamp has no time zone",
            hint="Send ISO 8601 with an offset or Z, e.g. 2026-11-29T12:00:00Z.",
        )
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise BadUserInput(
            f"{field}: the timestamp in UTC falls outside years 1-9999",
            hint="Send a timestamp between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z.",
        ) from None


_SPELLING = "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ"


def format_datetime(value: datetime) -> str:
    # Spelled out because strftime("%Y") does not zero-pad years below 1000 on
    # glibc; one %-format rather than seven f-string fields, and a datetime
    # already in UTC skips ``utc``'s checks and conversion: a scan spells
    # several timestamps (tests/domain/test_datetimes.py holds the old form).
    v = value if value.tzinfo is UTC else utc(value)
    return _SPELLING % (v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond)


def parse_datetime(text: str, *, field: str = "datetime") -> datetime:
    """Parse ISO 8601 with an offset (any precision), returning an aware UTC datetime."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise BadUserInput(
            f"{field}: {text!r} is not an ISO 8601 timestamp",
            hint="Use e.g. 2026-11-29T12:00:00.000000Z.",
        ) from None
    if parsed.tzinfo is UTC:
        # fromisoformat reads a Z as this very object, so the stored form
        # needs nothing more (``utc`` would return it unchanged, at 5x the cost).
        return parsed
    return utc(parsed, field=field)
