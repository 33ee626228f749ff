"""The product passport (EU Digital Product Passport export)."""

from .document import PASSPORT_CONTEXT, PASSPORT_REGULATION, passport_for

__all__ = ["PASSPORT_CONTEXT", "PASSPORT_REGULATION", "passport_for"]
