"""ScanInput: what a verifying client says about itself, validated."""

from __future__ import annotations

from dataclasses import dataclass

import strawberry

from domain.validation import CITY, DEVICE_FINGERPRINT, USER_AGENT, validate_country

__all__ = ["ScanDraft", "ScanInput"]


@strawberry.input(description="Optional facts about the scan; all fields may be omitted")
class ScanInput:
    country: str | None = strawberry.field(default=None, description="ISO 3166-1 alpha-2, e.g. FR")
    city: str | None = None
    device_fingerprint: str | None = strawberry.field(
        default=None, description="Stored only as a salted hash; lets a claimant be recognised"
    )
    user_agent: str | None = None


@dataclass(frozen=True)
class ScanDraft:
    country: str | None = None
    city: str | None = None
    device_fingerprint: str | None = None
    user_agent: str | None = None

    @classmethod
    def validate(cls, data: ScanInput | None, *, field: str = "scan") -> ScanDraft:
        if data is None:
            return cls()
        return cls(
            country=validate_country(data.country, field=f"{field}.country"),
            city=CITY.optional(data.city, field=f"{field}.city"),
            device_fingerprint=DEVICE_FINGERPRINT.optional(
                data.device_fingerprint, field=f"{field}.deviceFingerprint"
            ),
            user_agent=USER_AGENT.optional(data.user_agent, field=f"{field}.userAgent"),
        )
