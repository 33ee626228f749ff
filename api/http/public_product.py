"""The product a public label URL names by its code, for the endpoints that
answer outside GraphQL (``/qr``, ``/dpp``): AP05 then AP04, nothing else.

Every route that builds a body from stored data goes through here, so each
takes a token from the caller's rate-limit bucket (the anonymous bucket of
its address, the one ``verifyProduct`` takes from) before reading anything,
and ``budgeted_json`` holds its body to the response byte budget
(``PROOFGATE_MAX_RESPONSE_BYTES``) that GraphQL responses obey
(docs/design.md, Limits and cost).
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from api.http.authentication import client_address
from api.wire.errors import error_response
from domain.errors import ProofgateError, RateLimited, ResponseTooLarge
from services.auth import ANONYMOUS
from services.context import Services
from services.reads import StorageReads
from services.verification.lookup import product_for_code
from storage import Item

if TYPE_CHECKING:
    from api.limits.ratelimit import RateCheck

__all__ = ["PublicRefusal", "budgeted_json", "public_product", "take_public_token"]

_HINT = "Read the product's provenance page by page over GraphQL (Product.provenance)."


class PublicRefusal(Exception):
    """A public route's refusal, already the response to send."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


async def public_product(request: Request) -> tuple[Services, StorageReads, Item | None]:
    """The product the path's code names, after the caller's rate limit;
    raises ``PublicRefusal`` (429)."""
    await take_public_token(request)
    services: Services = request.app.state.graphql.services
    reads = StorageReads(services.storage, tenant="public")
    return services, reads, await product_for_code(reads, request.path_params["code"])


async def take_public_token(request: Request) -> None:
    """One token from the bucket ``verifyProduct`` takes from (the anonymous
    bucket of the caller's address); raises ``PublicRefusal`` (429)."""
    rate_check: RateCheck | None = request.app.state.graphql.schema.rate_check
    if rate_check is not None:
        try:
            await rate_check(ANONYMOUS, client_address(request), 1)
        except RateLimited as error:
            response = error_response(error, 429)
            wait = error.extensions.get("retryAfter")
            if wait is not None:
                response.headers["Retry-After"] = str(math.ceil(wait))
            raise PublicRefusal(response) from None


def budgeted_json(request: Request, document: Any) -> bytes:
    """``document`` as indented JSON; raises ``PublicRefusal`` when it is
    over the response byte budget."""
    body = json.dumps(document, ensure_ascii=False, indent=2).encode()
    limit: int = request.app.state.settings.limits.max_response_bytes
    if len(body) > limit:
        error: ProofgateError = ResponseTooLarge(
            f"The response would take more than {limit} bytes",
            hint=_HINT,
            maxResponseBytes=limit,
        )
        raise PublicRefusal(error_response(error, 422))
    return body
