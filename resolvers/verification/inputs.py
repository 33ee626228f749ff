"""ScanInput: what a verifying client says about itself (validated into a
``ScanDraft`` by the service)."""

from __future__ import annotations

import strawberry

from ..leaf_inputs import leaf_input

__all__ = ["ScanInput"]


@leaf_input
@strawberry.input(description="Optional facts about the scan; all fields may be omitted")
class ScanInput:
    country: str | None = strawberry.field(default=None, description="ISO 3166-1 alpha-2, e.g. FR")
    city: str | None = None
    device_fingerprint: str | None = strawberry.field(
        default=None, description="Stored only as a salted hash; lets a claimant be recognised"
    )
    user_agent: str | None = None
