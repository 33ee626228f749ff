"""Integrations are a brand's configuration: its BRAND keys and the operator only."""

from __future__ import annotations

from domain.errors import Forbidden

from ..auth import Principal, Role
from ..visibility import require_owner

__all__ = ["require_integration_admin"]


def require_integration_admin(principal: Principal, brand_id: str, field: str) -> None:
    require_owner(principal, brand_id, field)
    if principal.role is Role.PARTNER:
        raise Forbidden(f"{field} is visible only to the brand's BRAND keys")
