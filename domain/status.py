"""Product status transitions.

``transition`` is the whole rule, so mutations make their write conditional
on the status they read (``status = :current``) and concurrent calls yield
one change: the loser re-reads and gets the error a second call would get.

- ACTIVE -> TRANSFERRED, RECALLED or FLAGGED.
- TRANSFERRED -> TRANSFERRED (a later owner), RECALLED or FLAGGED.
- FLAGGED -> ACTIVE (cleared), TRANSFERRED or RECALLED.
- RECALLED is final. Recalling it again is CONFLICT (the request was already
  carried out); any other change is BAD_USER_INPUT (it cannot be carried out).
"""

from __future__ import annotations

from collections.abc import Mapping

from domain.errors import BadUserInput, Conflict

from .enums import ProductStatus

__all__ = ["ALLOWED_TRANSITIONS", "transition"]

_S = ProductStatus

ALLOWED_TRANSITIONS: Mapping[ProductStatus, frozenset[ProductStatus]] = {
    _S.ACTIVE: frozenset({_S.TRANSFERRED, _S.RECALLED, _S.FLAGGED}),
    _S.TRANSFERRED: frozenset({_S.TRANSFERRED, _S.RECALLED, _S.FLAGGED}),
    _S.FLAGGED: frozenset({_S.ACTIVE, _S.TRANSFERRED, _S.RECALLED}),
    _S.RECALLED: frozenset(),
}


def transition(current: ProductStatus, target: ProductStatus) -> ProductStatus:
    """``target`` if a product in ``current`` may move there, else the error to return."""
    if target in ALLOWED_TRANSITIONS[current]:
        return target
    if current == target:
        raise Conflict(
            f"Product is already {current.value.lower()}",
            hint="Nothing to do: the product already has this status.",
            status=current.value,
        )
    if current is ProductStatus.RECALLED:
        raise BadUserInput(
            f"A recalled product cannot be {target.value.lower()}",
            hint="A recall is final.",
            status=current.value,
        )
    raise BadUserInput(
        f"A {current.value.lower()} product cannot become {target.value.lower()}",
        status=current.value,
    )
