"""Partner ingest: integrations, their keys, and the events they append
(docs/design.md, Partner ingest)."""

from .commands import NewIntegration, create_integration, revoke_integration
from .receive import IngestFields, Receipt, ingest_event
from .signed import SignedRequest, authenticate_signed

__all__ = [
    "IngestFields",
    "NewIntegration",
    "Receipt",
    "SignedRequest",
    "authenticate_signed",
    "create_integration",
    "ingest_event",
    "revoke_integration",
]
