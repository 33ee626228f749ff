"""How audit entries are stored: one partition per UTC day (AP14).

Every mutation adds its entry to the transaction that makes its change, so the
log can neither miss a change nor record one that did not happen.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from domain.datetimes import format_datetime
from domain.identifiers import new_id
from storage import KeyTemplate, Put
from storage.access_patterns import AUDIT_DAY

from ..auth import Principal

__all__ = ["AUDIT_ENTRY_SORT", "audit_day", "audit_entry"]

# Time first, so a day's partition reads newest first; the id breaks ties.
AUDIT_ENTRY_SORT = KeyTemplate("ENTRY#{at:time}#{entry_id}")


def audit_day(moment: datetime) -> str:
    return moment.astimezone(UTC).date().isoformat()


def audit_entry(
    principal: Principal,
    action: str,
    at: datetime,
    *,
    brand_id: str | None,
    target_ids: Sequence[str] = (),
) -> Put:
    entry_id = new_id(at)
    return Put(
        {
            "PK": AUDIT_DAY.partition({"day": audit_day(at)}),
            "SK": AUDIT_ENTRY_SORT.format({"at": at, "entry_id": entry_id}),
            "entity": "AuditEntry",
            "id": entry_id,
            "occurredAt": format_datetime(at),
            "action": action,
            "actorRole": principal.role.value,
            "actorBrandId": principal.brand_id,
            "actorKeyId": principal.key_hash,
            "brandId": brand_id,
            "targetIds": list(target_ids),
        }
    )
