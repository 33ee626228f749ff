"""The threat rules' thresholds and windows, from ``PROOFGATE_THREAT_*``.

The rules are pure (``domain.threats``) and know nothing of the
environment; this reads the few values an operator tunes into their
``ThreatSettings``, which ``Settings`` carries as ``settings.pipeline.threats``.
A rule's window is also its alert's dedupe bucket, so one attack still raises
one alert per product, type and window.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta

from domain.threats import ThreatSettings

from ._environment import Environment

__all__ = ["threat_settings_from_env"]

_MINUTE = timedelta(minutes=1)
_HOUR = timedelta(hours=1)


def threat_settings_from_env(environ: Mapping[str, str] = os.environ) -> ThreatSettings:
    env = Environment(environ)
    default = ThreatSettings()
    geo_window = _HOUR * env.positive(
        "PROOFGATE_THREAT_GEO_WINDOW_HOURS", default.geo_window // _HOUR
    )
    burst_window = _MINUTE * env.positive(
        "PROOFGATE_THREAT_BURST_WINDOW_MINUTES", default.burst_window // _MINUTE
    )
    return ThreatSettings(
        geo_min_countries=env.positive(
            "PROOFGATE_THREAT_GEO_MIN_COUNTRIES", default.geo_min_countries
        ),
        geo_window=geo_window,
        geo_dedupe=geo_window,
        burst_max_scans=env.positive("PROOFGATE_THREAT_BURST_MAX_SCANS", default.burst_max_scans),
        burst_window=burst_window,
        burst_dedupe=burst_window,
        velocity_max_total=env.positive(
            "PROOFGATE_THREAT_VELOCITY_MAX_TOTAL", default.velocity_max_total
        ),
        velocity_max_per_day=env.decimal(
            "PROOFGATE_THREAT_VELOCITY_MAX_PER_DAY", default.velocity_max_per_day
        ),
        chain_gap_max=_HOUR
        * env.positive("PROOFGATE_THREAT_CHAIN_GAP_HOURS", default.chain_gap_max // _HOUR),
    )
