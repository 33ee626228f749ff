"""Fields only a brand's own keys (and the operator) may see.

Some objects are public (a product found by its code, the gallery, the brand
behind a product), but a few of their fields are the brand's business: the
verification code printed on the item, its counters, its plan. Those fields are
nullable and resolve to null with an error at their path for anyone else, so
a gallery query that asks for them still returns its public part. The error
says only which field was refused; the object's existence was already public.
"""

from __future__ import annotations

from domain.errors import Forbidden

from .auth import Principal

__all__ = ["require_owner"]


def require_owner(principal: Principal, brand_id: str, field: str) -> None:
    if principal.can_read(brand_id):
        return
    principal.require_authenticated()
    raise Forbidden(f"{field} is visible only to the brand's own API keys")
