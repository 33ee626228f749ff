"""The threat rules' thresholds and windows, from ``PROOFGATE_THREAT_*``.

The rules are pure (``domain.threats``) and know nothing of the
environment; ``ThreatSettings`` marks the few fields an operator tunes, and
``ThreatVariables`` is the section those marks make (``api.settings.declared``),
whose ``threats()`` ``Settings`` carries as ``settings.pipeline.threats``. A
rule's window is also its alert's dedupe bucket, so one attack still raises
one alert per product, type and window.
"""

from __future__ import annotations

from api.settings.declared import Declared
from domain.threats import ThreatSettings

__all__ = ["ThreatVariables"]


class ThreatVariables(Declared, declares=ThreatSettings):
    def threats(self) -> ThreatSettings:
        return self.build(ThreatSettings)
