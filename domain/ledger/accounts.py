"""Account names: ``brand:<brandId>:credits``, ``platform:grants``, ``platform:revenue``.

Brand accounts are the only ones that must never go negative; the platform
accounts are the other side of grants (a source, so it runs negative) and of
fees (a sink).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.errors import BadUserInput

__all__ = [
    "PLATFORM_ACCOUNTS",
    "PLATFORM_GRANTS",
    "PLATFORM_REVENUE",
    "Account",
    "brand_account",
    "parse_account",
]

PLATFORM_GRANTS = "platform:grants"
PLATFORM_REVENUE = "platform:revenue"
PLATFORM_ACCOUNTS = frozenset({PLATFORM_GRANTS, PLATFORM_REVENUE})

_BRAND_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_BRAND_ACCOUNT = re.compile(r"brand:([A-Za-z0-9_-]{1,128}):credits")
_HINT = "Use brand:<brandId>:credits, platform:grants or platform:revenue."


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    brand_id: str | None
    """Set for brand accounts only."""

    @property
    def may_go_negative(self) -> bool:
        return self.brand_id is None


def brand_account(brand_id: str) -> str:
    if not _BRAND_ID.fullmatch(brand_id):
        raise BadUserInput(f"Invalid brand id {brand_id[:128]!r} for a ledger account")
    return f"brand:{brand_id}:credits"


def parse_account(name: str) -> Account:
    if name in PLATFORM_ACCOUNTS:
        return Account(name, None)
    match = _BRAND_ACCOUNT.fullmatch(name)
    if match is None:
        raise BadUserInput(f"Unknown ledger account {name[:160]!r}", hint=_HINT)
    return Account(name, match.group(1))
