"""How a ``PROOFGATE_*`` value is written: the types sections declare.

Each parser takes the stripped text of a set variable (the reader never
calls one for an unset or blank variable, which keeps its default) and
raises ``Malformed`` with the problem, quoting the value, so the message an
operator sees names both the variable and what was wrong with it. A section
built directly (``Limits(max_depth=7)``) hands the parsers typed values,
which the same rules check.
"""

from __future__ import annotations

import ipaddress
import re
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TypeVar
from urllib.parse import urlsplit

from pydantic import BeforeValidator
from pydantic_settings import NoDecode

from api.settings.environment import Malformed
from domain.errors import ProofgateError
from domain.ledger import CREDIT, check_amount, parse_amount

__all__ = [
    "Addresses",
    "ArenasOrOff",
    "BytesOrOff",
    "CreditAmount",
    "EntriesOrOff",
    "FramesOrOff",
    "HttpUrl",
    "OneOrZero",
    "OperationNames",
    "Origins",
    "PerMinuteOrOff",
    "PlainDecimal",
    "Port",
    "Positive",
    "Switch",
    "UserPath",
    "choice",
    "matching",
]

_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]{1,12}(\.[0-9]{1,12})?")
_OFF = ("off", "false", "0", "no")
_ON = ("on", "true", "1", "yes")
_E = TypeVar("_E", bound=StrEnum)


def _whole(value: object) -> int | None:
    """The number a variable's digits, or a typed int (not a bool), spell."""
    if isinstance(value, str):
        return int(value) if _DIGITS.fullmatch(value) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _positive(value: object) -> int:
    number = _whole(value)
    if number is None or number < 1:
        raise Malformed(f"must be a positive integer, got {value!r}")
    return number


def _port(value: str) -> int:
    if not _DIGITS.fullmatch(value) or len(value) > 5 or not 0 < int(value) < 65536:
        raise Malformed(f"must be a port number 1-65535, got {value!r}")
    return int(value)


def _switch(value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    if value.lower() in _ON:
        return True
    if value.lower() in _OFF:
        return False
    raise Malformed(f"must be on or off, got {value!r}")


def _count_or_off(what: str) -> BeforeValidator:
    """A whole number of ``what``, where ``off`` is 0."""

    def parse(value: object) -> int:
        if isinstance(value, str) and value.lower() in _OFF:
            return 0
        number = _whole(value)
        if number is None or number < 0:
            raise Malformed(f"must be {what} or off, got {value!r}")
        return number

    return BeforeValidator(parse)


def _per_minute_or_off(value: object) -> int | None:
    if value is None or (isinstance(value, str) and value.lower() in _OFF):
        return None
    number = _whole(value)
    if number is None or number < 1:
        raise Malformed(f"must be calls per minute or off, got {value!r}")
    return number


def _one_or_zero(value: str | bool) -> bool:
    """Stricter than ``Switch``: what the pipeline's flags always accepted."""
    if isinstance(value, bool):
        return value
    if value.lower() not in ("0", "1", "true", "false"):
        raise Malformed("use 1 or 0")
    return value.lower() in ("1", "true")


def _plain_decimal(value: str) -> Decimal:
    """No exponent, sign or thousands separator to misread: ``5``, ``2.5``."""
    if not _DECIMAL.fullmatch(value):
        raise Malformed(f"must be a non-negative decimal such as 2.5, got {value!r}")
    return Decimal(value)


def _credit_amount(value: str | Decimal) -> Decimal:
    """Checked by the ledger's own rules, so a setting can hold no amount a
    posting could not."""
    try:
        if isinstance(value, Decimal):
            return check_amount(value, CREDIT)
        return parse_amount(value, CREDIT)
    except ProofgateError as error:
        raise Malformed(f"{error.message}, got {value!r}") from None


def _is_origin_like(value: str, *, allow_path: bool) -> bool:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    return allow_path or not (parts.path or parts.query or parts.fragment or parts.username)


def _http_url(value: str) -> str:
    if not _is_origin_like(value, allow_path=True):
        raise Malformed(f"must be an http(s) URL, got {value!r}")
    return value


def _origins(value: str) -> tuple[str, ...]:
    origins = tuple(o.strip() for o in value.split(",") if o.strip())
    for origin in origins:
        if origin != "*" and not _is_origin_like(origin, allow_path=False):
            raise Malformed(
                f"{origin!r} is not an origin: browsers send scheme://host[:port], "
                "with no path or trailing slash"
            )
    return origins


_GRAPHQL_NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]*")


def _operation_names(value: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    for name in names:
        if not _GRAPHQL_NAME.fullmatch(name):
            raise Malformed(f"{name!r} is not a GraphQL operation name")
    return names


def choice(choices: type[_E]) -> BeforeValidator:
    """One of an enum's values, in any letter case."""

    def parse(value: str) -> _E:
        if isinstance(value, choices):
            return value
        try:
            return choices(value.lower())
        except ValueError:
            allowed = ", ".join(c.value for c in choices)
            raise Malformed(f"must be one of {allowed}, got {value!r}") from None

    return BeforeValidator(parse)


def matching(pattern: re.Pattern[str], expected: str) -> BeforeValidator:
    def parse(value: str) -> str:
        if not pattern.fullmatch(value):
            raise Malformed(f"must be {expected}, got {value!r}")
        return value

    return BeforeValidator(parse)


def _addresses(value: str) -> tuple[str, ...]:
    """``*``, or comma-separated IP addresses and networks (uvicorn's
    ``forwarded_allow_ips``)."""
    entries = tuple(entry.strip() for entry in value.split(",") if entry.strip())
    for entry in entries:
        if entry == "*":
            continue
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            raise Malformed(f"must be IP addresses or networks or *, got {entry!r}") from None
    return entries


Positive = Annotated[int, BeforeValidator(_positive)]
Addresses = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_addresses)]
Port = Annotated[int, BeforeValidator(_port)]
Switch = Annotated[bool, BeforeValidator(_switch)]
OneOrZero = Annotated[bool, BeforeValidator(_one_or_zero)]
EntriesOrOff = Annotated[int, _count_or_off("a number of entries")]
FramesOrOff = Annotated[int, _count_or_off("a number of frames")]
ArenasOrOff = Annotated[int, _count_or_off("a number of arenas")]
BytesOrOff = Annotated[int, _count_or_off("a number of bytes")]

MillisecondsOrOff = Annotated[int, _count_or_off("milliseconds")]
"""A count where ``off`` is 0."""
PerMinuteOrOff = Annotated[int | None, BeforeValidator(_per_minute_or_off)]
"""A rate where ``off`` is None: unlimited."""
PlainDecimal = Annotated[Decimal, BeforeValidator(_plain_decimal)]
CreditAmount = Annotated[Decimal, BeforeValidator(_credit_amount)]
HttpUrl = Annotated[str | None, BeforeValidator(_http_url)]
Origins = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_origins)]
"""Comma-separated; NoDecode because pydantic-settings would read a tuple as JSON."""
OperationNames = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_operation_names)]
"""Comma-separated GraphQL names, as registered operations are called."""
UserPath = Annotated[Path, BeforeValidator(lambda value: Path(value).expanduser())]
