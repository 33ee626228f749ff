"""``GET /debug/memory``: what SQLite, malloc and the collector hold, and
the allocation sites that grew since the previous call while
``PROOFGATE_TRACEMALLOC_FRAMES`` traces allocations; for the admin key only
(``api/observability/memory.py``; docs/design.md, Memory growth).

``?by=lineno|filename|traceback`` groups the sites (``traceback`` needs more
than one frame to say more than ``lineno``); ``?limit=N`` keeps the N largest.
"""

from __future__ import annotations

import asyncio
import tracemalloc

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from api.http.health import operator_refusal
from api.observability.memory import SITES_MAX, Grouping, MemorySites, totals_lines
from api.wire.errors import error_response
from domain.errors import BadUserInput

__all__ = ["memory_endpoint"]

SITES_DEFAULT = 25
UNTRACED = (
    "# allocation sites are not traced: restart with PROOFGATE_TRACEMALLOC_FRAMES=1 "
    "(or more frames) to list them"
)


async def memory_endpoint(request: Request) -> Response:
    refusal = await operator_refusal(
        request, "Memory reports", "Ask with the admin key as a Bearer token."
    )
    if refusal is not None:
        return refusal
    try:
        grouping, limit = _query(request)
    except BadUserInput as error:
        return error_response(error, 400)
    sites: MemorySites = request.app.state.memory_sites
    # Seconds of grouping for a large heap: off the loop, which keeps serving.
    return PlainTextResponse(await asyncio.to_thread(_report, sites, grouping, limit))


def _report(sites: MemorySites, grouping: Grouping, limit: int) -> str:
    if not tracemalloc.is_tracing():
        return "\n".join([*totals_lines(), UNTRACED]) + "\n"
    return sites.report(grouping, limit)


def _query(request: Request) -> tuple[Grouping, int]:
    by = request.query_params.get("by", Grouping.LINENO.value)
    if by not in set(Grouping):
        choices = ", ".join(g.value for g in Grouping)
        raise BadUserInput(
            f"by must be one of {choices}, got {by[:32]!r}", hint="Omit it for lineno."
        )
    raw = request.query_params.get("limit", str(SITES_DEFAULT))
    if not raw.isdigit() or not 1 <= int(raw) <= SITES_MAX:
        raise BadUserInput(
            f"limit must be a whole number from 1 to {SITES_MAX}, got {raw[:32]!r}",
            hint=f"Omit it for {SITES_DEFAULT}.",
        )
    return Grouping(by), int(raw)
