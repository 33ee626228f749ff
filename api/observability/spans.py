"""OpenTelemetry spans, off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set: one span per HTTP request, one
per GraphQL operation inside it, one per storage call by access pattern
inside that (docs/design.md, "Operations").

The packages come with the ``otel`` extra and are imported only when spans
are on, so a gateway without them pays nothing, not even the imports. The
tracer travels with the request in a ContextVar: the operation extension and
the storage wrapper make spans only inside a traced request, never for the
relay's or the tailer's background reads.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strawberry.extensions import SchemaExtension

from api import __version__
from api.observability.observation import current_observation
from domain.errors import ConfigurationError

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

__all__ = ["ENDPOINT_VARIABLES", "OperationSpans", "RequestSpans", "Spans", "span", "spans_on"]

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
# Paths whose name is fixed; any other path (a QR code, a passport) would give
# every span a name of its own.
_NAMED_PATHS = frozenset({"/graphql", "/health", "/ready", "/metrics"})

_tracer: ContextVar[Tracer | None] = ContextVar("proofgate_tracer", default=None)


@dataclass(frozen=True)
class Spans:
    tracer: Tracer
    shutdown: Callable[[], None] = lambda: None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Spans | None:
        """Spans exported over OTLP/HTTP; the exporter and the SDK read the rest
        of the standard ``OTEL_*`` variables (headers, service name, sampler)."""
        if not any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES):
            return None
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            raise ConfigurationError(
                f"{ENDPOINT_VARIABLES[0]} is set but OpenTelemetry is not installed",
                hint="Install proofgate[otel], or unset the variable.",
            ) from None
        resource = Resource.create({"service.name": "proofgate", "service.version": __version__})
        provider = TracerProvider(resource=resource)
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        return cls(provider.get_tracer("proofgate", __version__), provider.shutdown)


def spans_on() -> bool:
    """Whether this request is traced: its operation then gets a span."""
    return _tracer.get() is not None


def span(name: str, attributes: dict[str, Any]) -> AbstractContextManager[Span | None]:
    """A child span of the request's current one, or nothing outside a traced request."""
    tracer = _tracer.get()
    if tracer is None:
        return nullcontext()
    from opentelemetry.trace import SpanKind

    return tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes)


class RequestSpans:
    """The request's span, continuing the caller's trace (``traceparent``)."""

    def __init__(self, app: ASGIApp, *, spans: Spans) -> None:
        self.app = app
        self.tracer = spans.tracer

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        """Returns the inner app's awaitable for what it does not handle rather
        than awaiting it: a WebSocket lives for hours, and a frame per
        middleware per connection is memory an idle subscription keeps
        (docs/design.md, Alert fan-out)."""
        if scope["type"] != "http":
            return self.app(scope, receive, send)
        return self._traced(scope, receive, send)

    async def _traced(self, scope: Scope, receive: Receive, send: Send) -> None:
        status = 500

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        with self._span(scope) as request_span:
            token = _tracer.set(self.tracer)
            try:
                await self.app(scope, receive, send_status)
            finally:
                _tracer.reset(token)
                _finish(request_span, status)

    @contextmanager
    def _span(self, scope: Scope) -> Iterator[Span]:
        from opentelemetry.propagate import extract
        from opentelemetry.trace import SpanKind

        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        path = scope["path"]
        name = f"{scope['method']} {path}" if path in _NAMED_PATHS else scope["method"]
        attributes = {"http.request.method": scope["method"], "url.path": path}
        with self.tracer.start_as_current_span(
            name, context=extract(carrier), kind=SpanKind.SERVER, attributes=attributes
        ) as request_span:
            yield request_span


def _finish(request_span: Span, status: int) -> None:
    from opentelemetry.trace import Status, StatusCode

    request_span.set_attribute("http.response.status_code", status)
    observation = current_observation()
    if observation is not None:
        request_span.set_attribute("proofgate.request_id", observation.request_id)
        if observation.error_codes:
            request_span.set_attribute("proofgate.error_codes", observation.error_codes)
        if observation.principal:
            request_span.set_attribute("proofgate.principal", observation.principal)
    if status >= 500:
        request_span.set_status(Status(StatusCode.ERROR))


class OperationSpans(SchemaExtension):
    """The GraphQL operation's span, named like ``query Brands``."""

    def on_operation(self) -> Iterator[None]:
        tracer = _tracer.get()
        if tracer is None:
            yield
            return
        with tracer.start_as_current_span("graphql.operation") as operation_span:
            yield
            context = self.execution_context
            kind = "operation"
            if context.graphql_document is not None:
                with suppress(RuntimeError):  # no operation of that name
                    kind = context.operation_type.value
            name = context.operation_name
            operation_span.update_name(f"{kind} {name}" if name else kind)
            operation_span.set_attribute("graphql.operation.type", kind)
            if name:
                operation_span.set_attribute("graphql.operation.name", name)
