"""The data plane's signer against botocore's ``SigV4Auth``: the same
credentials, time, target, body and endpoint give the same headers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore import auth as botocore_auth
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import ReadOnlyCredentials
from hypothesis import given, settings
from hypothesis import strategies as st

from storage.dynamodb._signing import Signer

CONTENT_TYPE = "application/x-amz-json-1.0"
ENDPOINTS = (
    "https://dynamodb.us-east-1.amazonaws.com",
    "https://dynamodb.eu-west-1.amazonaws.com/",
    "https://DynamoDB.Example.com:443",
    "https://123456789012.ddb.us-east-1.amazonaws.com:8443/",
    "http://127.0.0.1:8000",
    "http://localhost:80",
    "http://[::1]:8000",
)
_tokens = st.one_of(st.none(), st.text("ABCDEFabcdef0123456789+/=", min_size=1, max_size=40))
_times = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2035, 1, 1), timezones=st.just(UTC)
)


def botocore_headers(
    credentials: ReadOnlyCredentials,
    url: str,
    region: str,
    target: str,
    body: bytes,
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    monkeypatch.setattr(botocore_auth, "get_current_datetime", lambda: now.replace(tzinfo=None))
    request = AWSRequest(
        method="POST",
        url=url,
        data=body,
        headers={"X-Amz-Target": target, "Content-Type": CONTENT_TYPE},
    )
    SigV4Auth(credentials, "dynamodb", region).add_auth(request)
    return dict(request.headers.items())


@settings(max_examples=150, deadline=None)
@given(
    endpoint=st.sampled_from(ENDPOINTS),
    region=st.sampled_from(["us-east-1", "eu-west-1", "ap-southeast-2"]),
    operation=st.sampled_from(["GetItem", "Query", "TransactWriteItems"]),
    body=st.binary(max_size=300),
    secret=st.text(min_size=1, max_size=40),
    token=_tokens,
    now=_times,
)
def test_headers_match_sigv4auth(
    endpoint: str,
    region: str,
    operation: str,
    body: bytes,
    secret: str,
    token: str | None,
    now: datetime,
) -> None:
    credentials = ReadOnlyCredentials("AKIDEXAMPLE", secret, token, None)
    target = f"DynamoDB_20120810.{operation}"
    signer = Signer(endpoint, region, "dynamodb")
    with pytest.MonkeyPatch.context() as monkeypatch:
        expected = botocore_headers(credentials, endpoint, region, target, body, now, monkeypatch)
    assert signer.headers(credentials, CONTENT_TYPE, target, body, now) == expected


def test_the_days_key_is_kept_and_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """One signer across midnight and a rotated secret signs as botocore does."""
    signer = Signer(ENDPOINTS[0], "us-east-1", "dynamodb")
    day = datetime(2026, 12, 1, 23, 59, 59, tzinfo=UTC)
    for now, secret in [
        (day, "one"),
        (day, "one"),
        (day + timedelta(seconds=2), "one"),
        (day + timedelta(seconds=3), "two"),
    ]:
        credentials = ReadOnlyCredentials("AKID", secret, None, None)
        expected = botocore_headers(
            credentials, ENDPOINTS[0], "us-east-1", "T", b"{}", now, monkeypatch
        )
        assert signer.headers(credentials, CONTENT_TYPE, "T", b"{}", now) == expected
