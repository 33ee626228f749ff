"""Dashboard analytics from counters (docs/design.md, "Analytics")."""

from .counters import alert_counter_updates, scan_counter_updates, status_change
from .reads import brand_summary, product_summary, status_counts

__all__ = [
    "alert_counter_updates",
    "brand_summary",
    "product_summary",
    "scan_counter_updates",
    "status_change",
    "status_counts",
]
