"""Who may read a brand's ledger: the operator and the brand's own BRAND keys.

Partner keys read products and threats, not money. A transaction of another
brand answers exactly as a missing one (NOT_FOUND), so ids leak nothing.
"""

from __future__ import annotations

from domain.errors import Forbidden

from ..auth import Principal, Role

__all__ = ["can_read_ledger", "require_ledger_reader"]


def can_read_ledger(principal: Principal, brand_id: str) -> bool:
    return principal.is_admin or (principal.role is Role.BRAND and principal.brand_id == brand_id)


def require_ledger_reader(principal: Principal, brand_id: str) -> None:
    if can_read_ledger(principal, brand_id):
        return
    principal.require_authenticated()
    raise Forbidden("The ledger is visible only to the brand's own BRAND keys")
