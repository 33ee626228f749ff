"""The facts of a scan as verification records them: validated input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from domain.validation import CITY, DEVICE_FINGERPRINT, USER_AGENT, validate_country

__all__ = ["ScanDraft", "ScanFields"]


class ScanFields(Protocol):
    """The facts of a scan as a client sends them (``ScanInput``)."""

    @property
    def country(self) -> str | None: ...
    @property
    def city(self) -> str | None: ...
    @property
    def device_fingerprint(self) -> str | None: ...
    @property
    def user_agent(self) -> str | None: ...


@dataclass(frozen=True)
class ScanDraft:
    country: str | None = None
    city: str | None = None
    device_fingerprint: str | None = None
    user_agent: str | None = None

    @classmethod
    def validate(cls, data: ScanFields | None, *, field: str = "scan") -> ScanDraft:
        if data is None:
            return cls()
        names = _SCAN_FIELDS if field == "scan" else _names(field)
        return cls(
            country=validate_country(data.country, field=names[0]),
            city=CITY.optional(data.city, field=names[1]),
            device_fingerprint=DEVICE_FINGERPRINT.optional(data.device_fingerprint, field=names[2]),
            user_agent=USER_AGENT.optional(data.user_agent, field=names[3]),
        )


def _names(field: str) -> tuple[str, str, str, str]:
    """The paths errors name, e.g. ``scan.city``."""
    return (f"{field}.country", f"{field}.city", f"{field}.deviceFingerprint", f"{field}.userAgent")


_SCAN_FIELDS = _names("scan")
"""Every verification's: spelled once, not four times a scan."""
