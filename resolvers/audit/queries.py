"""``auditLog(days)``: the operator's view of every change.

Admin only: entries name brands and keys across tenants, and a per-brand view
would need a per-brand partition this layout does not have.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import strawberry

from domain.errors import BadUserInput
from services.audit.items import audit_day
from storage.access_patterns import AUDIT_DAY

from ..context import Info
from ..fields import ap_field
from .types import AuditEntry

__all__ = ["AUDIT_DAYS_MAX", "AUDIT_FIRST_MAX", "AuditQueries"]

AUDIT_DAYS_MAX = 31
AUDIT_FIRST_MAX = 100


@strawberry.type
class AuditQueries:
    @ap_field(
        AUDIT_DAY, description="The newest entries of the last `days` UTC days (1-31), newest first"
    )
    async def audit_log(
        self, info: Info, days: int = 1, first: int = AUDIT_FIRST_MAX
    ) -> list[AuditEntry]:
        """One query per day, all in flight at once (scatter-gather); each day
        already reads newest first, so concatenating in day order keeps the order."""
        context = info.context
        context.principal.require_admin()
        if not 1 <= days <= AUDIT_DAYS_MAX:
            raise BadUserInput(f"days: between 1 and {AUDIT_DAYS_MAX} allowed, got {days}")
        if not 1 <= first <= AUDIT_FIRST_MAX:
            raise BadUserInput(f"first: between 1 and {AUDIT_FIRST_MAX} allowed, got {first}")
        today = context.now()
        day_keys = [audit_day(today - timedelta(days=offset)) for offset in range(days)]
        pages = await asyncio.gather(
            *(context.loaders.page(AUDIT_DAY, {"day": day}, first=first) for day in day_keys)
        )
        items = [item for page in pages for item in page.items][:first]
        return [AuditEntry.from_item(item) for item in items]
