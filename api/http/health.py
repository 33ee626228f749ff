"""``/health``, ``/ready`` and ``/metrics``: what a load balancer and a scraper ask.

Liveness answers while the process runs; readiness reads the store once,
bounded in time; metrics are for the admin key only.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from api import __version__
from api.http.authentication import Authenticator, authentication_refusal
from api.observability.metrics import CONTENT_TYPE_LATEST, Metrics
from api.wire.errors import error_response
from domain.errors import Forbidden, ProofgateError
from storage.access_patterns import HEALTH_PROBE

__all__ = ["READY_TIMEOUT_SECONDS", "health", "metrics_endpoint", "operator_refusal", "ready"]

READY_TIMEOUT_SECONDS = 2.0

logger = logging.getLogger("proofgate.api")


async def health(request: Request) -> JSONResponse:
    """Liveness: answers while the process runs, whatever storage is doing."""
    return JSONResponse({"status": "ok", "version": __version__})


async def operator_refusal(request: Request, what: str, hint: str) -> Response | None:
    """401/429 without a valid key, 403 for any key but the admin key; None: the operator."""
    authenticator: Authenticator = request.app.state.graphql.authenticator
    try:
        principal = await authenticator.authenticate(
            request.headers.get("authorization"), request.client and request.client.host
        )
    except ProofgateError as error:
        return authentication_refusal(error)
    if not principal.is_admin:
        return error_response(Forbidden(f"{what} are for the operator", hint=hint), 403)
    return None


async def metrics_endpoint(request: Request) -> Response:
    """Prometheus text format, for the admin key only (see ``api/observability/metrics.py``)."""
    refusal = await operator_refusal(
        request, "Metrics", "Scrape with the admin key as a Bearer token."
    )
    if refusal is not None:
        return refusal
    metrics: Metrics = request.app.state.metrics
    try:
        async with asyncio.timeout(READY_TIMEOUT_SECONDS):
            metrics.observe_backlog(await request.app.state.pipeline.backlog())
    except Exception:
        # The request and error series still tell the operator what is wrong.
        logger.warning("Measuring the outbox backlog failed", exc_info=True)
    return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)


async def ready(request: Request) -> JSONResponse:
    """Readiness: one GetItem of the health probe (AP21), bounded in time,
    because a hung store must fail the probe rather than hang it."""
    storage = request.app.state.storage
    try:
        async with asyncio.timeout(READY_TIMEOUT_SECONDS):
            await storage.get(HEALTH_PROBE)
    except Exception:
        logger.warning("Readiness probe failed", exc_info=True)
        return JSONResponse({"status": "unavailable", "storage": storage.backend}, status_code=503)
    return JSONResponse({"status": "ready", "storage": storage.backend})
