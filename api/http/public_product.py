"""The product a public label URL names by its code, for the endpoints that
answer outside GraphQL (``/qr``, ``/dpp``): AP05 then AP04, nothing else."""

from __future__ import annotations

from starlette.requests import Request

from services.context import Services
from services.reads import StorageReads
from services.verification.lookup import product_for_code
from storage import Item

__all__ = ["product_at"]


async def product_at(request: Request) -> tuple[Services, StorageReads, Item | None]:
    services: Services = request.app.state.graphql.services
    reads = StorageReads(services.storage, tenant="public")
    return services, reads, await product_for_code(reads, request.path_params["code"])
