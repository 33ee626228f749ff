"""The ASGI application: storage lifecycle, routes, middleware, CORS.

``create_app`` is the one place the application is assembled; the GraphQL
layer adds its routes here. Storage is opened once in the lifespan and kept on
``app.state.storage`` because its clients (an aiobotocore client, a SQLite
connection) are expensive to create and meant to be shared.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from api.demo.loader import start_demo
from api.graphql.entry import GraphQLEntry
from api.graphql.prepared import prepared_lane
from api.graphql.response_cache import ResponseAnswers
from api.graphql.response_cache.wiring import attach_response_cache, response_answers
from api.graphql.schema import ProofgateSchema, build_schema
from api.graphql.view import GraphQLApp, GraphQLEndpoint, GraphQLSockets
from api.graphql.webhook_selections import SchemaSelections
from api.http.authentication import Authenticator, FailedAuthThrottle
from api.http.debug_memory import memory_endpoint
from api.http.digital_link import digital_link_routes
from api.http.explorer import explorer_asset
from api.http.guard import HTTPGuard
from api.http.health import health, metrics_endpoint, ready
from api.http.ingest import ingest_endpoint
from api.http.passport import passport_download
from api.http.qr import qr_image
from api.http.verify_page import verify_routes
from api.limits.auth_throttle import AuthThrottle, InProcessThrottle
from api.mcp.http import MCPEndpoint, MCPService
from api.mcp.tools import tool_specs
from api.observability import fallbacks
from api.observability.memory import MemorySites
from api.observability.metrics import SHARED_REFRESH_SECONDS, Metrics
from api.observability.request_log import RequestObserver
from api.observability.spans import RequestSpans, Spans
from api.observability.traced_storage import TracedStorage
from api.operations.defaults import default_documents
from api.operations.registry import OperationRegistry, load_registry
from api.operations.trusted import UntrustedCounter
from api.runtime.backend import open_storage
from api.runtime.cache_channel import running_cache_channel
from api.runtime.malloc_trim import trimming
from api.runtime.periodic import every
from api.runtime.pipeline import build_pipeline, running_pipeline
from api.runtime.resolver_services import build_services
from api.settings.gateway import Settings
from api.settings.key_ring import record_signing_key
from api.settings.limits import Lane
from domain import verdicts
from services.context import Services
from services.pipeline import Pipeline
from storage import Storage
from storage.cache import CachedStorage

__all__ = ["CORS_HEADERS", "ProofgateApp", "create_app", "from_environment"]

CORS_HEADERS = (
    "Authorization",
    "Content-Type",
    "X-Proofgate-Trace",
    "X-Proofgate-CSRF",
    "Apollo-Require-Preflight",
    "X-Request-Id",
    "Last-Event-ID",
)
"""Request headers a page on an allowed origin may send; ``Last-Event-ID`` is
how graphql-sse resumes a subscription (``api/http/streams.py``)."""


class ProofgateApp(Starlette):
    """Starlette, with POST /graphql taken by ``GraphQLEntry`` in front of the
    middleware stack (``api/graphql/entry.py``); None: every request
    takes the stack. Starlette's own ``__call__`` stays the ASGI entry point,
    so servers that look for a coroutine function find one."""

    graphql_entry: GraphQLEntry | None = None

    def build_middleware_stack(self) -> ASGIApp:
        stack = super().build_middleware_stack()

        def dispatch(scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
            """Returns the awaitable rather than awaiting it: no frame of its
            own for a WebSocket's lifetime (docs/design.md, Alert fan-out)."""
            entry = self.graphql_entry
            if entry is not None and entry.takes(scope):
                return entry(scope, receive, send)
            return stack(scope, receive, send)

        return dispatch


def create_app(settings: Settings, *, spans: Spans | None = None) -> ProofgateApp:
    """``spans``: OpenTelemetry spans for requests, operations and storage
    calls (``api/observability/spans.py``); none by default."""
    metrics = Metrics()
    verdicts.set_budget(settings.verdict_cache_bytes)
    untrusted = UntrustedCounter(metrics.untrusted_documents.inc)
    schema, registry = _schema(settings, untrusted, metrics)
    metrics.always_count(registry.by_name)
    tools = tool_specs(schema.graphql_schema, registry)
    throttle = _auth_throttle(settings, metrics)
    answers = response_answers(settings, registry)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        app.state.storage = await open_storage(settings)
        try:
            attach_response_cache(answers, app.state.storage)
            selections = SchemaSelections(
                schema, settings.limits, settings.operations.trusted_documents, registry, untrusted
            )
            pipeline, services = _wired(settings, app.state.storage, metrics, selections, spans)
            await record_signing_key(app.state.storage, services.key_ring)
            async with (
                running_cache_channel(settings, app.state.storage),
                running_pipeline(pipeline),
            ):
                app.state.pipeline = pipeline
                graphql = _graphql_app(schema, services, settings, registry, throttle, answers)
                app.state.graphql = graphql
                if isinstance(app, ProofgateApp) and app.graphql_entry is not None:
                    app.graphql_entry.graphql = graphql
                _count(metrics, app.state.graphql, pipeline, app.state.storage)
                mcp = MCPService(schema, services, tools)
                async with _timers(settings, metrics, graphql, services), mcp.running():
                    app.state.mcp = mcp
                    app.state.demo = (
                        await start_demo(schema, services, settings) if settings.demo else None
                    )
                    yield
        finally:
            await schema.close()
            await throttle.close()
            await app.state.storage.close()
            if spans is not None:
                spans.shutdown()

    middleware = _middleware(settings, metrics, spans)
    app = ProofgateApp(routes=_routes(), middleware=middleware, lifespan=lifespan)
    if spans is None and Lane.ENTRY in settings.limits.execution:
        app.graphql_entry = _entry(app, settings, metrics)
    metrics.count_fast_paths((fallbacks.counts, fallbacks.taken))
    app.state.settings, app.state.metrics = settings, metrics
    app.state.operations, app.state.untrusted_documents = registry, untrusted
    app.state.memory_sites = MemorySites()
    return app


@asynccontextmanager
async def _timers(
    settings: Settings, metrics: Metrics, graphql: GraphQLApp, services: Services
) -> AsyncIterator[None]:
    """What the process does on a clock: WebSocket key checks and keep-alives,
    its gauges written for the other workers, the allocator's free pages
    handed back."""
    watching = graphql.connections.watching(
        services.storage,
        settings.pipeline.key_check_interval,
        settings.pipeline.keepalive_interval,
    )
    trim = timedelta(milliseconds=settings.malloc_trim_ms)
    async with AsyncExitStack() as timers:
        await timers.enter_async_context(watching)
        await timers.enter_async_context(trimming(trim))
        if metrics.shared:
            refresh = every(SHARED_REFRESH_SECONDS, metrics.refresh, "Writing the gauges failed")
            await timers.enter_async_context(refresh)
        yield


def _wired(
    settings: Settings,
    storage: Storage,
    metrics: Metrics,
    selections: SchemaSelections,
    spans: Spans | None,
) -> tuple[Pipeline, Services]:
    """The pipeline and the resolvers' services over the opened store, with
    the webhooks' selections bound to those services."""
    pipeline = build_pipeline(
        settings,
        storage,
        on_delivery=metrics.delivered,
        on_redis_outage=metrics.redis_outage("alerts"),
        selections=selections,
    )
    traced = storage if spans is None else TracedStorage(storage)
    services = build_services(settings, traced, pipeline, selections)
    selections.bind(services)
    return pipeline, services


def _schema(
    settings: Settings, untrusted: UntrustedCounter, metrics: Metrics
) -> tuple[ProofgateSchema, OperationRegistry]:
    """The one schema of the app, and the operation registry checked against it."""
    limits, operations = settings.limits, settings.operations

    def load(schema: ProofgateSchema) -> OperationRegistry:
        return load_registry(schema, limits, operations.directory, default_documents())

    schema = build_schema(
        limits,
        load,
        operations.trusted_documents,
        untrusted,
        redis_url=settings.pipeline.redis_url,
        on_redis_outage=metrics.redis_outage("limits"),
        redis_prefix=settings.pipeline.redis_prefix,
    )
    assert schema.operations is not None
    return schema, schema.operations


def _auth_throttle(settings: Settings, metrics: Metrics) -> FailedAuthThrottle:
    """Failed authentications per address: shared through Redis when there is one."""
    pipeline = settings.pipeline
    if pipeline.redis_url is None:
        return InProcessThrottle(AuthThrottle(settings.auth_failure_rate))
    from api.limits.shared_auth_throttle import SharedAuthThrottle

    return SharedAuthThrottle(
        settings.auth_failure_rate,
        pipeline.redis_url,
        prefix=pipeline.redis_prefix,
        on_outage=metrics.redis_outage("limits"),
    )


def _graphql_app(
    schema: ProofgateSchema,
    services: Services,
    settings: Settings,
    registry: OperationRegistry,
    throttle: FailedAuthThrottle,
    answers: ResponseAnswers | None,
) -> GraphQLApp:
    return GraphQLApp(
        schema,
        services,
        graphql_ide="graphiql",
        allowed_origins=settings.cors_origins,
        max_message_bytes=settings.limits.max_body_bytes,
        shared_payload_bytes=settings.limits.fanout_payload_bytes,
        max_tokens=settings.limits.max_tokens,
        authenticator=Authenticator(
            services.storage, services.admin_key_hash, throttle, services.keys
        ),
        prepared_lane=prepared_lane(
            schema, settings.limits, registry, settings.operations.trusted_documents
        ),
        response_answers=answers,
        direct_keepalive=Lane.KEEPALIVE in settings.limits.execution,
    )


def _count(metrics: Metrics, graphql: GraphQLApp, pipeline: Pipeline, storage: Storage) -> None:
    """The gauges read live state: sockets, subscriptions, the relay's pressure,
    the storage cache's counts."""
    metrics.count_websockets(graphql.connections.__len__)
    metrics.count_subscriptions(lambda: pipeline.broker.subscription_count)
    metrics.count_relay(pipeline.relay.pressure)
    if isinstance(storage, CachedStorage):
        entries = storage.entries
        metrics.cache.watch(storage.stats, lambda: entries.bytes, storage.freshness.trusted)
    answers = graphql.response_answers
    if answers is not None:
        cache = answers.cache
        metrics.response_cache.watch(cache.stats, lambda: cache.bytes)


def from_environment() -> Starlette:
    """The app from ``PROOFGATE_*`` variables, for an ASGI server's factory
    option: ``uvicorn --factory api.app:from_environment``."""
    return create_app(Settings.from_env(), spans=Spans.from_environment())


def _routes() -> list[BaseRoute]:
    """/graphql first: routes are matched in order, and it takes nearly every request."""
    return [
        Route("/graphql", GraphQLEndpoint()),
        Route("/health", health, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
        Route("/debug/memory", memory_endpoint, methods=["GET"]),
        Route("/qr/{code}.{format}", qr_image, methods=["GET", "HEAD"]),
        Route("/dpp/{code}.json", passport_download, methods=["GET"]),
        Route("/ingest/{source}", ingest_endpoint, methods=["POST"]),
        Route("/graphql/static/{name}", explorer_asset, methods=["GET", "HEAD"]),
        *verify_routes(),
        *digital_link_routes(),
        WebSocketRoute("/graphql", GraphQLEndpoint()),
        Route("/mcp", MCPEndpoint()),
    ]


def _cors(settings: Settings) -> dict[str, Any]:
    return {
        "allow_origins": settings.cors_origins,
        "allow_methods": ("GET", "POST"),
        "allow_headers": CORS_HEADERS,
        "expose_headers": ("Retry-After", "X-Request-Id"),
    }


def _entry(app: ProofgateApp, settings: Settings, metrics: Metrics) -> GraphQLEntry:
    """What ``_middleware``'s layers do for POST /graphql, in one callable."""
    graphql = next(r for r in app.router.routes if isinstance(r, Route) and r.path == "/graphql")
    cors = CORSMiddleware(graphql.app, **_cors(settings)) if settings.cors_origins else None
    return GraphQLEntry(
        app,
        graphql.app,
        observer=RequestObserver(graphql.app, metrics=metrics),
        max_bytes=settings.limits.max_body_bytes,
        cors=cors,
    )


def _middleware(settings: Settings, metrics: Metrics, spans: Spans | None) -> list[Middleware]:
    """WebSockets to /graphql leave first (``GraphQLSockets``: nothing here
    handles them); then CORS, so refusals (413, 415) reach a browser app
    readably; the observer next, so refusals are logged and counted, then the
    request's span, which reads what the observer gathered."""
    guard = [
        Middleware(RequestObserver, metrics=metrics),
        Middleware(HTTPGuard, max_bytes=settings.limits.max_body_bytes),
    ]
    if spans is not None:
        guard.insert(1, Middleware(RequestSpans, spans=spans))
    cors = [Middleware(CORSMiddleware, **_cors(settings))]
    return [Middleware(GraphQLSockets), *(cors if settings.cors_origins else ()), *guard]
