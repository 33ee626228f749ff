"""A request context over a given store, for tests that run the schema
without the app (its services as ``build_services`` makes them, minus the
pipeline)."""

from __future__ import annotations

from decimal import Decimal

from domain.signing import KeyRing, SigningKey
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import ANONYMOUS, Principal
from services.context import Services
from storage import Storage


def request_context(
    storage: Storage,
    *,
    principal: Principal = ANONYMOUS,
    request_id: str = "r1",
    request: object = None,
) -> RequestContext:
    services = Services(
        storage=storage,
        admin_key_hash="0" * 64,
        key_ring=KeyRing.of(SigningKey.generate()),
        hash_salt=bytes(16),
        registration_fee=Decimal(0),
    )
    loaders = Loaders(storage, principal.tenant)
    return RequestContext(services, principal, loaders, request_id=request_id, request=request)
