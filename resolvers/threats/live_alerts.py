"""One ``ThreatAlert`` per stored alert for every subscriber it reaches.

The broker offers one item to every subscriber of its brand; giving them one
``ThreatAlert`` lets the executor run each group's selection once, and lets
the direct fan-out make it once per batch (docs/design.md, Alert fan-out).
"""

from __future__ import annotations

from collections import OrderedDict

from storage import Item

from .types import ThreatAlert

__all__ = ["LIVE_ALERTS_KEPT", "live_alert"]

LIVE_ALERTS_KEPT = 64
"""Alerts remembered by their item, the most recent first kept."""

_LIVE_ALERTS: OrderedDict[int, tuple[Item, ThreatAlert]] = OrderedDict()


def live_alert(item: Item) -> ThreatAlert:
    """The alert of ``item``, the same object for the same item while it is
    among the last ``LIVE_ALERTS_KEPT`` (each entry holds its item, so its
    id is not reused meanwhile)."""
    kept = _LIVE_ALERTS.get(id(item))
    if kept is not None and kept[0] is item:
        return kept[1]
    alert = ThreatAlert.from_item(item)
    _LIVE_ALERTS[id(item)] = (item, alert)
    while len(_LIVE_ALERTS) > LIVE_ALERTS_KEPT:
        _LIVE_ALERTS.popitem(last=False)
    return alert
