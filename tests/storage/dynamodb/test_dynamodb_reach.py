"""``check_table`` tells an outage, which passes by itself, from a
misconfiguration, which waiting never fixes (docs/design.md, Degraded start):
the same probe against a stand-in that answers what DynamoDB answers in each case."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from domain.errors import ConfigurationError, ServiceUnavailable
from storage.dynamodb import check_table
from tests._support.canned_dynamo import Canned, canned_dynamo

REGION = "us-east-1"
TABLE = "proofgate"


def _error(code: str, message: str = "canned") -> str:
    return json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Canned]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    with canned_dynamo() as canned:
        yield canned


async def _check(url: str) -> None:
    await check_table(table_name=TABLE, region=REGION, endpoint_url=url)


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (500, "InternalServerError"),
        (503, "ServiceUnavailable"),
        (400, "ThrottlingException"),
        (400, "ProvisionedThroughputExceededException"),
        (400, "RequestLimitExceeded"),
    ],
)
async def test_a_5xx_or_throttling_is_an_outage(server: Canned, status: int, code: str) -> None:
    server.answer(status, _error(code).encode())
    with pytest.raises(ServiceUnavailable) as raised:
        await _check(server.url)
    assert code in raised.value.message and server.url in raised.value.message
    assert server.targets == ["DynamoDB_20120810.GetItem"], "one attempt, no retries"


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("ResourceNotFoundException", f"table {TABLE} does not exist"),
        ("AccessDeniedException", f"Not allowed to GetItem on DynamoDB table {TABLE}"),
        ("UnrecognizedClientException", "refuses these AWS credentials"),
        ("InvalidSignatureException", "refuses these AWS credentials"),
        ("ExpiredTokenException", "refuses these AWS credentials"),
    ],
)
async def test_a_refusal_no_wait_can_change_is_a_misconfiguration(
    server: Canned, code: str, says: str
) -> None:
    server.answer(400, _error(code).encode())
    with pytest.raises(ConfigurationError) as raised:
        await _check(server.url)
    assert says in raised.value.message and raised.value.hint


async def test_the_same_probe_passes_when_the_store_answers(server: Canned) -> None:
    """The positive control: the stand-in answering an empty GetItem."""
    server.answer(200, b"{}")
    await _check(server.url)


async def test_a_refused_connection_where_the_name_resolves_is_an_outage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://localhost:{probe.getsockname()[1]}"
    with pytest.raises(ServiceUnavailable, match="EndpointConnectionError"):
        await _check(url)


async def test_a_host_name_that_does_not_resolve_is_a_misconfiguration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``.invalid`` never resolves (RFC 6761)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    with pytest.raises(ConfigurationError, match=r"no host named no-such-host\.invalid"):
        await _check("http://no-such-host.invalid:8000")
