"""The threat rules' thresholds and windows, from ``PROOFGATE_THREAT_*``.

The rules are pure (``domain.threats``) and know nothing of the
environment; ``ThreatVariables`` declares the few values an operator tunes
and makes their ``ThreatSettings``, which ``Settings`` carries as
``settings.pipeline.threats``. A rule's window is also its alert's dedupe
bucket, so one attack still raises one alert per product, type and window.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel

from api.settings.formats import PlainDecimal, Positive
from domain.threats import ThreatSettings

__all__ = ["ThreatVariables"]

_MINUTE = timedelta(minutes=1)
_HOUR = timedelta(hours=1)
_DEFAULT = ThreatSettings()


class ThreatVariables(BaseModel):
    threat_geo_min_countries: Positive = _DEFAULT.geo_min_countries
    threat_geo_window_hours: Positive = _DEFAULT.geo_window // _HOUR
    threat_burst_max_scans: Positive = _DEFAULT.burst_max_scans
    threat_burst_window_minutes: Positive = _DEFAULT.burst_window // _MINUTE
    threat_velocity_max_total: Positive = _DEFAULT.velocity_max_total
    threat_velocity_max_per_day: PlainDecimal = _DEFAULT.velocity_max_per_day
    threat_chain_gap_hours: Positive = _DEFAULT.chain_gap_max // _HOUR

    def threats(self) -> ThreatSettings:
        geo_window = _HOUR * self.threat_geo_window_hours
        burst_window = _MINUTE * self.threat_burst_window_minutes
        return ThreatSettings(
            geo_min_countries=self.threat_geo_min_countries,
            geo_window=geo_window,
            geo_dedupe=geo_window,
            burst_max_scans=self.threat_burst_max_scans,
            burst_window=burst_window,
            burst_dedupe=burst_window,
            velocity_max_total=self.threat_velocity_max_total,
            velocity_max_per_day=self.threat_velocity_max_per_day,
            chain_gap_max=_HOUR * self.threat_chain_gap_hours,
        )
