"""The per-request context resolvers receive as ``info.context``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strawberry.types import Info as StrawberryInfo

from services.auth import Principal
from services.context import Services
from storage import Storage
from storage.trace import Trace

from .loaders import Loaders

__all__ = ["Info", "RequestContext"]


@dataclass
class RequestContext:
    """One request's view of the services; satisfies ``CommandContext``, so
    commands read through this request's DataLoaders."""

    services: Services
    principal: Principal
    loaders: Loaders
    request_id: str
    trace: Trace | None = None
    request: Any = None
    response: Any = None
    execution: str | None = None
    """Which executor ran the operation: "compiled" or "graphql-core"; None
    while none has (an operation refused before execution)."""

    @property
    def storage(self) -> Storage:
        return self.services.storage

    def now(self) -> datetime:
        return self.services.clock()


Info = StrawberryInfo[RequestContext, None]
