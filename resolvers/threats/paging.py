"""Paging ``Brand.threats`` (AP12) by severity: a brand's alerts, newest first,
across monthly partitions.

The alerts of every month are on one GSI1 partition per brand, so one Query
pages through all of them. ``minSeverity`` cannot be a key condition; the
field keeps reading pages until it has ``first`` matches, at most
``SCAN_MAX_ITEMS`` alerts per request, and then hands back a cursor that
continues where it stopped.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from domain.enums import Severity
from domain.errors import BadUserInput
from services.pipeline.alerts.records import alert_matches
from storage import Page
from storage.access_patterns import BRAND_THREATS

from ..loaders import Loaders
from ..types.connection import Connection, Edge, PageInfo
from .types import ThreatAlert

__all__ = ["SCAN_MAX_ITEMS", "THREATS_EPOCH", "severe_threats"]

THREATS_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SCAN_MAX_ITEMS = 1000


async def severe_threats(
    loaders: Loaders,
    params: dict[str, Any],
    first: int | None,
    after: str | None,
    min_severity: Severity,
) -> Connection[ThreatAlert]:
    """``Brand.threats`` with ``minSeverity``: reads pages until it has
    ``first`` matches or has examined ``SCAN_MAX_ITEMS`` alerts."""
    wanted = BRAND_THREATS.default_page if first is None else first
    if not 0 <= wanted <= BRAND_THREATS.max_page:
        raise BadUserInput(f"first must be between 0 and {BRAND_THREATS.max_page}")
    matches: list[tuple[Page, int]] = []
    examined = 0
    cursor = after
    last: tuple[Page, int] | None = None
    while len(matches) <= wanted and examined < SCAN_MAX_ITEMS:
        page = await loaders.page(BRAND_THREATS, params, first=BRAND_THREATS.max_page, after=cursor)
        for index, item in enumerate(page.items):
            examined += 1
            last = (page, index)
            if alert_matches(item, min_severity=min_severity, types=None):
                matches.append((page, index))
                if len(matches) > wanted:
                    break
        if not page.has_next_page or not page.items:
            more = len(matches) > wanted
            break
        cursor = page.end_cursor
    else:
        more = True
    shown = matches[:wanted]
    edges = [Edge(node=ThreatAlert.from_item(p.items[i]), _page=p, _index=i) for p, i in shown]
    if more and len(shown) < wanted and last is not None:
        end_cursor: str | None = last[0].cursor(last[1])
    else:
        end_cursor = shown[-1][0].cursor(shown[-1][1]) if shown else None
    start = shown[0] if shown else None
    info = PageInfo(has_next_page=more, _end_cursor=end_cursor, _start=start)
    return Connection(_edges=edges, page_info=info)
