"""The language of a page, from the browser's ``Accept-Language`` (RFC 9110,
section 12.5.4): the supported language with the highest weight, matched on
its primary subtag (``fr-CA`` asks for ``fr``); ``*`` or nothing we have
gives the first supported one (docs/design.md, Verification page)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ACCEPT_LANGUAGE_MAX_RANGES", "negotiate_language"]

ACCEPT_LANGUAGE_MAX_RANGES = 32
"""Ranges read from one header: a browser sends a handful; the rest are ignored."""


def _weight(parameters: list[str]) -> float:
    for parameter in parameters:
        name, _, value = parameter.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                weight = float(value.strip())
            except ValueError:
                return 0.0
            return weight if 0.0 <= weight <= 1.0 else 0.0
    return 1.0


def negotiate_language(header: str | None, supported: Sequence[str]) -> str:
    """``supported``: lowercase primary subtags, the default first."""
    if not header:
        return supported[0]
    best, best_weight = supported[0], 0.0
    for entry in header.split(",")[:ACCEPT_LANGUAGE_MAX_RANGES]:
        tag, *parameters = entry.split(";")
        primary = tag.strip().lower().partition("-")[0]
        weight = _weight(parameters)
        if primary == "*":
            primary = supported[0]
        # Earlier ranges win ties, as browsers list them in order of preference.
        if primary in supported and weight > best_weight and weight > 0:
            best, best_weight = primary, weight
    return best
