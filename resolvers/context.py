"""The per-request context resolvers receive as ``info.context``."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strawberry.types import Info as StrawberryInfo

from services.auth import Principal
from services.context import Services
from storage import Storage
from storage.trace import Trace

from .loaders import Loaders

__all__ = ["OPERATION_COST", "Info", "RequestContext", "request_context"]

OPERATION_COST: ContextVar[int] = ContextVar("proofgate_operation_cost", default=0)
"""The planned reads of the operation running in this task (for a
subscription, of one event), set by the gateway's cost check: a context
variable because one WebSocket context serves several operations at once."""


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
    from_client: bool = True
    """False for an operation the gateway runs itself (the demo loader): the
    trusted-documents gate is for the documents clients send
    (docs/design.md, Named operations)."""

    @property
    def storage(self) -> Storage:
        return self.services.storage

    def now(self) -> datetime:
        return self.services.clock()

    @property
    def client_host(self) -> str | None:
        """The caller's address, for a request that came over HTTP or a WebSocket."""
        client = getattr(self.request, "client", None)
        return client.host if client is not None else None

    def for_operation(self) -> RequestContext:
        """An HTTP request runs one operation, on this context; a WebSocket's
        runs each on a copy (``SocketContext``). The compiled executor calls
        it (``api.graphql.execution.protocols.OperationContext``)."""
        return self


Info = StrawberryInfo[RequestContext, None]


def request_context(value: object) -> RequestContext | None:
    """``value`` (an extension's ``execution_context.context``) as the
    gateway's request context; None for an operation run without one, as a
    schema executed directly by a test or a tool is."""
    return value if isinstance(value, RequestContext) else None
