"""resolveThreat (``services.threats.commands``)."""

from __future__ import annotations

import strawberry

from services.threats import commands
from storage.access_patterns import THREAT_BY_ID

from ..context import Info
from ..fields import mutation_field
from .types import ThreatAlert

__all__ = ["ThreatMutations"]


@strawberry.type
class ThreatMutations:
    @mutation_field(
        reads=THREAT_BY_ID,
        description="Mark an alert resolved. Resolving it again changes nothing: "
        "openThreatCount falls once per alert.",
    )
    async def resolve_threat(self, info: Info, id: strawberry.ID) -> ThreatAlert:
        return ThreatAlert.from_item(await commands.resolve_threat(info.context, id))
