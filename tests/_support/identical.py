"""Equality that also asks for the same types and the same key order, for
differential tests against a reference implementation."""

from __future__ import annotations

from typing import Any


def identical(left: Any, right: Any) -> bool:
    """``left == right`` with ``True != 1``, ``1 != 1.0`` and dict keys in one order."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(identical(v, right[k]) for k, v in left.items())
    if isinstance(left, list):
        return len(left) == len(right) and all(map(identical, left, right))
    return bool(left == right)
