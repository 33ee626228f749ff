"""Thresholds, windows and dedupe windows of the threat rules.

A rule's *window* is how far back it looks; its *dedupe window* is the bucket
its alert id is keyed by. Buckets are fixed and aligned to the Unix epoch (so
24 h buckets start at UTC midnight): every process, and every retry of the
same scan, computes the same bucket without coordination. ``None`` as a dedupe
window means one alert per triggering event.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from domain.errors import ProofgateError
from domain.variables import variable

__all__ = ["ThreatSettings"]

_MINUTE = timedelta(minutes=1)
_HOUR = timedelta(hours=1)
_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class ThreatSettings:
    # GEOGRAPHIC_ANOMALY: alert at this many distinct countries within the window.
    geo_min_countries: int = variable(3, "threat_geo_min_countries")
    geo_window: timedelta = variable(
        _DAY, "threat_geo_window_hours", unit=_HOUR, also=("geo_dedupe",)
    )
    geo_dedupe: timedelta = _DAY
    # BURST_SCAN: alert when the window holds more scans than this.
    burst_max_scans: int = variable(10, "threat_burst_max_scans")
    burst_window: timedelta = variable(
        _HOUR, "threat_burst_window_minutes", unit=_MINUTE, also=("burst_dedupe",)
    )
    burst_dedupe: timedelta = _HOUR
    # SCAN_VELOCITY: alert when both the total and the daily average exceed these.
    velocity_max_total: int = variable(20, "threat_velocity_max_total")
    velocity_max_per_day: Decimal = variable(
        Decimal(5), "threat_velocity_max_per_day", format="decimal"
    )
    velocity_dedupe: timedelta = _DAY
    # CLAIMED_PRODUCT_SCAN: one alert per product and day while foreign scans go on.
    claimed_scan_dedupe: timedelta = _DAY
    # HASH_TAMPERING: a tampered record makes every scan COUNTERFEIT; hourly, not per scan.
    tampering_dedupe: timedelta = _HOUR
    # RECALLED_PRODUCT_SCAN: informational, so daily.
    recalled_scan_dedupe: timedelta = _DAY
    # CHAIN_GAP: alert when an event follows its predecessor by more than this.
    chain_gap_max: timedelta = variable(72 * _HOUR, "threat_chain_gap_hours", unit=_HOUR)
    # OWNERSHIP_DISPUTE: None raises one alert per dispute.
    dispute_dedupe: timedelta | None = None

    def __post_init__(self) -> None:
        for name in ("geo_min_countries", "burst_max_scans", "velocity_max_total"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ProofgateError(f"Threat setting {name} must be a non-negative int")
        if self.geo_min_countries < 1:
            raise ProofgateError("Threat setting geo_min_countries must be at least 1")
        if not isinstance(self.velocity_max_per_day, Decimal) or not (
            self.velocity_max_per_day.is_finite() and self.velocity_max_per_day >= 0
        ):
            raise ProofgateError("Threat setting velocity_max_per_day must be a Decimal >= 0")
        for name in (
            "geo_window",
            "geo_dedupe",
            "burst_window",
            "burst_dedupe",
            "velocity_dedupe",
            "claimed_scan_dedupe",
            "tampering_dedupe",
            "recalled_scan_dedupe",
            "chain_gap_max",
            "dispute_dedupe",
        ):
            value = getattr(self, name)
            if value is None and name == "dispute_dedupe":
                continue
            if not isinstance(value, timedelta) or value <= timedelta(0):
                raise ProofgateError(f"Threat setting {name} must be a positive timedelta")

    @property
    def lookback(self) -> timedelta:
        """How far back the caller must read a product's scans (AP10) for the rules."""
        return max(self.geo_window, self.burst_window)
