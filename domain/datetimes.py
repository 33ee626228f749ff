"""The one textual form of a timestamp.

Certificates hash ``createdAt`` and provenance events hash ``occurredAt``
"exactly as the API returns it", so the API, the hashes and anyone verifying
offline must agree on a single spelling: UTC, a literal ``Z``, always six
fractional digits (``2026-11-29T12:00:00.123456Z``). Fixed width also makes the
strings sort in time order.
"""

from __future__ import annotations

import re
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
_CANONICAL = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z"
).fullmatch
"""The one spelling, exactly: ``format_datetime`` of what such a text parses
to gives the text back (tests/domain/test_datetimes.py checks it)."""

_known: tuple[object, str, bool, object, str, bool] = (None, "", True, None, "", True)
"""The last two datetimes spelled or parsed, each with its text and whether
that is known to be the one spelling: bounded at two items. A scan spells
each of its times more than once (the scan item and its event payload, a
product's ``createdAt`` read and spelled again, an event's ``occurredAt``
parsed and hashed), ~12k instructions each. Keyed by identity, which the held
reference keeps unique, and datetimes are immutable; rebound as one tuple,
so threads never see a text paired with another's datetime."""


def _remember(value: datetime, text: str, spelled: bool) -> None:
    global _known
    known = _known
    _known = (value, text, spelled, known[0], known[1], known[2])


def format_datetime(value: datetime) -> str:
    known = _known
    if value is known[0] and (known[2] or _CANONICAL(known[1]) is not None):
        return known[1]
    if value is known[3] and (known[5] or _CANONICAL(known[4]) is not None):
        return known[4]
    # Spelled out because strftime("%Y") does not zero-pad years below 1000 on
    # glibc; one %-format rather than seven f-string fields, and a datetime
    # already in UTC skips ``utc``'s checks and conversion: a scan spells
    # several timestamps (tests/domain/test_datetimes.py holds the old form).
    v = value if value.tzinfo is UTC else utc(value)
    text = _SPELLING % (v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond)
    _remember(value, text, True)
    return text


def parse_datetime(text: str, *, field: str = "datetime") -> datetime:
    """Parse ISO 8601 with an offset (any precision), returning an aware UTC
    datetime. It is remembered with its text, as it is usually spelled again
    (``format_datetime``, which checks the text is the one spelling only then)."""
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
        _remember(parsed, text, False)
        return parsed
    return utc(parsed, field=field)
