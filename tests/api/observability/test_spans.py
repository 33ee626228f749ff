"""OpenTelemetry spans, recorded with the SDK's in-memory exporter: a request
span continuing the caller's trace, the operation inside it, and a span per
access-pattern call inside that; none when spans are off."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from _asgi import ADMIN_KEY, GraphQLClient, environment, running
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from api.app import create_app
from api.observability.spans import Spans
from api.settings.gateway import Settings
from domain.errors import ConfigurationError

REGISTER = """mutation Register($domain: String!) {
    registerBrand(input: {name: "Acme", domain: $domain, plan: FREE}) { brand { id } }
}"""
BRANDS = "query Brands { brands(first: 5) { edges { node { id name } } } }"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exported = InMemorySpanExporter()
    yield exported
    exported.clear()


async def _client(tmp_path: Path, spans: Spans | None) -> AsyncIterator[GraphQLClient]:
    app = create_app(Settings.from_env(environment(tmp_path)), spans=spans)
    async with running(app) as http:
        yield GraphQLClient(app, http)


@pytest.fixture
async def traced(tmp_path: Path, exporter: InMemorySpanExporter) -> AsyncIterator[GraphQLClient]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    async for client in _client(tmp_path, Spans(provider.get_tracer("test"), provider.shutdown)):
        yield client


def by_name(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    (found,) = [s for s in spans if s.name == name]
    return found


async def test_a_request_its_operation_and_its_storage_calls_nest(
    traced: GraphQLClient, exporter: InMemorySpanExporter
) -> None:
    await traced.data(REGISTER, {"domain": "acme.example.com"}, key=ADMIN_KEY)
    exporter.clear()
    response = await traced.post(BRANDS, key=ADMIN_KEY, headers={"traceparent": PARENT})
    assert response.status_code == 200 and "errors" not in response.json()

    spans = exporter.get_finished_spans()
    request = by_name(spans, "POST /graphql")
    operation = by_name(spans, "query Brands")
    listing = by_name(spans, "AP02 Query")
    loading = [s for s in spans if s.name.startswith("AP01 ")]
    assert request.kind is SpanKind.SERVER
    assert format(request.context.trace_id, "032x") == TRACE_ID, "continues the caller's trace"
    assert request.attributes is not None
    assert request.attributes["http.response.status_code"] == 200
    assert request.attributes["proofgate.request_id"] == response.headers["x-request-id"]
    assert request.attributes["proofgate.principal"] == "ADMIN"
    assert operation.parent is not None and operation.parent.span_id == request.context.span_id
    assert operation.attributes == {
        "graphql.operation.type": "query",
        "graphql.operation.name": "Brands",
    }
    assert listing.kind is SpanKind.CLIENT
    assert listing.parent is not None and listing.parent.span_id == operation.context.span_id
    assert listing.attributes is not None
    assert listing.attributes["proofgate.access_pattern"] == "AP02"
    assert listing.attributes["db.system"] == "sqlite"
    assert listing.attributes["proofgate.items"] == 1
    assert len(loading) == 1, "the brand is loaded by AP01 in one batch"
    assert loading[0].parent is not None
    assert {s.context.trace_id for s in spans} == {request.context.trace_id}


async def test_a_mutation_shows_its_write_and_an_error_its_code(
    traced: GraphQLClient, exporter: InMemorySpanExporter
) -> None:
    await traced.data(REGISTER, {"domain": "write.example.com"}, key=ADMIN_KEY)
    names = [s.name for s in exporter.get_finished_spans()]
    assert "mutation Register" in names and "TransactWriteItems" in names
    exporter.clear()

    body = await traced.execute(REGISTER, {"domain": "write.example.com"})
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    request = by_name(exporter.get_finished_spans(), "POST /graphql")
    assert request.attributes is not None
    assert list(request.attributes["proofgate.error_codes"]) == ["UNAUTHENTICATED"]


async def test_without_spans_nothing_is_recorded(
    tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
    """The same workload as above on a gateway without spans: the exporter,
    which the traced gateway fills, stays empty."""
    async for client in _client(tmp_path, None):
        await client.data(REGISTER, {"domain": "quiet.example.com"}, key=ADMIN_KEY)
        await client.data(BRANDS, key=ADMIN_KEY)
    assert exporter.get_finished_spans() == ()


def test_spans_are_on_only_with_an_otlp_endpoint() -> None:
    assert Spans.from_environment({}) is None
    assert Spans.from_environment({"OTEL_EXPORTER_OTLP_ENDPOINT": " "}) is None
    spans = Spans.from_environment({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert spans is not None
    spans.shutdown()


def test_an_endpoint_without_the_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    with pytest.raises(ConfigurationError) as refused:
        Spans.from_environment({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318"})
    assert refused.value.message == (
        "OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed"
    )
