"""The contract's scalars: DateTime (ISO 8601 UTC), Decimal (a string), JSON."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal as PyDecimal
from decimal import InvalidOperation
from typing import TYPE_CHECKING, Any, NewType, TypeAlias

import strawberry

from proofgate.domain.datetimes import format_datetime, parse_datetime
from proofgate.errors import BadUserInput

__all__ = ["JSON", "DateTime", "Decimal"]


def _parse_datetime(value: Any) -> datetime:
    if not isinstance(value, str):
        raise BadUserInput("DateTime must be an ISO 8601 string")
    return parse_datetime(value)


def _parse_decimal(value: Any) -> PyDecimal:
    if not isinstance(value, str):
        raise BadUserInput(
            'Decimal amounts are strings, e.g. "1.00"', hint="Never send floats for money."
        )
    try:
        return PyDecimal(value)
    except InvalidOperation:
        raise BadUserInput(f"Invalid decimal {value!r}") from None


if TYPE_CHECKING:
    # What resolvers hold; the schema sees the scalars below.
    DateTime: TypeAlias = datetime
    Decimal: TypeAlias = PyDecimal
    JSON: TypeAlias = Any
else:
    DateTime = strawberry.scalar(
        NewType("DateTime", datetime),
        name="DateTime",
        description="ISO 8601 timestamp in UTC, e.g. 2026-01-31T12:00:00.000000Z",
        serialize=format_datetime,
        parse_value=_parse_datetime,
    )

    Decimal = strawberry.scalar(
        NewType("Decimal", PyDecimal),
        name="Decimal",
        description="An exact decimal number, as a string",
        serialize=str,
        parse_value=_parse_decimal,
    )

    JSON = strawberry.scalar(
        NewType("JSON", object),
        name="JSON",
        description="Arbitrary JSON value",
        serialize=lambda v: v,
        parse_value=lambda v: v,
    )
