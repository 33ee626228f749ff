"""Queries about the gateway itself."""

from __future__ import annotations

from importlib.metadata import version

import strawberry

from storage.access_patterns import HEALTH_PROBE, REGISTRY

from .context import Info
from .fields import ap_field, computed_field
from .types.system import AccessPattern, Health, Viewer

__all__ = ["SystemQueries"]

VERSION = version("proofgate")


@strawberry.type
class SystemQueries:
    @ap_field(HEALTH_PROBE)
    async def health(self, info: Info) -> Health:
        """Reads the probe item (a GetItem, never a Scan): a store that answers
        is healthy, whether or not the probe item exists."""
        await info.context.loaders.item(HEALTH_PROBE)
        return Health(status="ok", storage=info.context.storage.backend, version=VERSION)

    @computed_field
    def viewer(self, info: Info) -> Viewer:
        principal = info.context.principal
        return Viewer(
            role=str(principal.role),  # the StrEnum's value, as exactly a str
            brand_id=strawberry.ID(principal.brand_id) if principal.brand_id else None,
        )

    @computed_field
    def access_patterns(self) -> list[AccessPattern]:
        return [AccessPattern.from_definition(ap) for ap in REGISTRY]
