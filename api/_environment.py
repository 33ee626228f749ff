"""Reading ``PROOFGATE_*`` variables: one reader, so every setting treats an
empty value as unset and names its variable when the value is malformed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from enum import StrEnum
from typing import TypeVar
from urllib.parse import urlsplit

from domain.errors import ConfigurationError, ProofgateError
from domain.ledger import parse_amount

__all__ = ["Environment", "invalid"]

_PORT = re.compile(r"[0-9]{1,5}")
_DECIMAL = re.compile(r"[0-9]{1,12}(\.[0-9]{1,12})?")
_E = TypeVar("_E", bound=StrEnum)


class Environment:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def get(self, name: str) -> str | None:
        return self._environ.get(name, "").strip() or None

    def choice(self, name: str, choices: type[_E], default: _E) -> _E:
        value = self.get(name)
        if value is None:
            return default
        try:
            return choices(value.lower())
        except ValueError:
            allowed = ", ".join(c.value for c in choices)
            raise invalid(name, f"must be one of {allowed}, got {value!r}") from None

    def matching(self, name: str, pattern: re.Pattern[str], default: str, expected: str) -> str:
        value = self.get(name)
        if value is None:
            return default
        if not pattern.fullmatch(value):
            raise invalid(name, f"must be {expected}, got {value!r}")
        return value

    def url(self, name: str) -> str | None:
        value = self.get(name)
        if value is not None and not _is_origin_like(value, allow_path=True):
            raise invalid(name, f"must be an http(s) URL, got {value!r}")
        return value

    def port(self, name: str, default: int) -> int:
        value = self.get(name)
        if value is None:
            return default
        if not _PORT.fullmatch(value) or not 0 < int(value) < 65536:
            raise invalid(name, f"must be a port number 1-65535, got {value!r}")
        return int(value)

    def origins(self, name: str) -> tuple[str, ...]:
        origins = tuple(o.strip() for o in (self.get(name) or "").split(",") if o.strip())
        for origin in origins:
            if origin != "*" and not _is_origin_like(origin, allow_path=False):
                raise invalid(
                    name,
                    f"{origin!r} is not an origin: browsers send scheme://host[:port], "
                    "with no path or trailing slash",
                )
        return origins

    def positive(self, name: str, default: int) -> int:
        value = self.get(name)
        if value is None:
            return default
        if not value.isdigit() or int(value) < 1:
            raise invalid(name, f"must be a positive integer, got {value!r}")
        return int(value)

    def decimal(self, name: str, default: Decimal) -> Decimal:
        """A non-negative decimal written out plainly (``5``, ``2.5``): no
        exponent, sign or thousands separator to misread."""
        value = self.get(name)
        if value is None:
            return default
        if not _DECIMAL.fullmatch(value):
            raise invalid(name, f"must be a non-negative decimal such as 2.5, got {value!r}")
        return Decimal(value)

    def amount(self, name: str, default: Decimal, currency: str) -> Decimal:
        """An amount at the currency's scale, checked by the ledger's own rules."""
        value = self.get(name)
        if value is None:
            return default
        try:
            return parse_amount(value, currency)
        except ProofgateError as error:
            raise invalid(name, f"{error.message}, got {value!r}") from None


def _is_origin_like(value: str, *, allow_path: bool) -> bool:
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    return allow_path or not (parts.path or parts.query or parts.fragment or parts.username)


def invalid(name: str, problem: str) -> ConfigurationError:
    return ConfigurationError(f"Invalid {name}: {problem}")
