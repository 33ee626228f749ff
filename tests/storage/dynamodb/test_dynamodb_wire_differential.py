"""The data plane against botocore: the same bytes read both ways must give the
same results (compared by ``repr``, so int, Decimal and bytes cannot pass for
one another), the same request bodies, and the same exceptions and retry
decisions for error responses (docs/design.md, DynamoDB data plane)."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import orjson
import pytest
from botocore.exceptions import ClientError
from botocore.parsers import create_parser
from botocore.serialize import create_serializer
from botocore.session import get_session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage import Key, Put, Update
from storage.dynamodb import _responses
from storage.dynamodb._client import connect
from storage.dynamodb._codec import serialize_item
from storage.dynamodb._errors import (
    is_server_error,
    is_throttled,
    transaction_error,
    translate,
)
from storage.dynamodb._wire import Wire, encode_body
from tests._support import botocore_codec as reference
from tests._support.canned_dynamo import Canned, canned_dynamo
from tests._support.wire_values import WireValues

TABLE = "differential"
GENERATED_ITEMS = 2_000
"""Items each run decodes both ways, at the least (issue 21)."""

_MODEL = get_session().get_service_model("dynamodb")
_PARSER = create_parser("json")
_SERIALIZER = create_serializer("json")


def _botocore(operation: str, body: bytes) -> dict[str, Any]:
    """What the client handed the driver: botocore's parser over the bytes."""
    response = {"status_code": 200, "headers": {}, "body": body, "context": {}}
    parsed: dict[str, Any] = _PARSER.parse(response, _MODEL.operation_model(operation).output_shape)
    return parsed


# -- generated wire values: all ten types, as any client may have written them

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=16)
_names = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12)
_KEY_NAMES = ("PK", "SK")
_attribute_names = _names.filter(lambda name: name not in _KEY_NAMES)
"""An item's other attributes: one named SK would replace the key (a number
set where the table's key is a string), which no table returns."""


_ZEROS = ("0", "-0", "0.0", "-0.000", "0E+5")


@st.composite
def _number(draw: st.DrawFn) -> str:
    """Up to 38 digits in any of the forms a client may send; two draws, not
    one per digit, so thousands of items generate in seconds."""
    digits = str(draw(st.one_of(st.integers(0, 10**38 - 1), st.just(10**38 - 1))))
    shape = draw(st.integers(0, 2**16 - 1))
    sign = "-" if shape & 1 else ""
    form = (shape >> 1) % 4
    if form == 0:
        return _ZEROS[(shape >> 3) % len(_ZEROS)]
    if form == 1:
        cut = 1 + (shape >> 3) % len(digits)
        return f"{sign}{digits[:cut]}.{digits[cut:] or '0'}"
    if form == 2:
        exponent = -129 + (shape >> 3) % (255 - len(digits))
        mark = "E" if shape & 2**15 else "e"
        return f"{sign}{digits[0]}.{digits[1:] or '0'}{mark}{exponent:+d}"
    return sign + digits


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


_leaves = st.one_of(
    _text.map(lambda s: {"S": s}),
    _number().map(lambda n: {"N": n}),
    st.binary(max_size=24).map(lambda b: {"B": _b64(b)}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.just({"NULL": True}),
    st.lists(_text, min_size=1, max_size=4, unique=True).map(lambda v: {"SS": v}),
    st.lists(_number(), min_size=1, max_size=4, unique=True).map(lambda v: {"NS": v}),
    st.lists(st.binary(max_size=8), min_size=1, max_size=4, unique=True).map(
        lambda v: {"BS": [_b64(b) for b in v]}
    ),
)
_values = st.recursive(
    _leaves,
    lambda children: st.one_of(
        st.dictionaries(_names, children, max_size=4).map(lambda m: {"M": m}),
        st.lists(children, max_size=4).map(lambda items: {"L": items}),
    ),
    max_leaves=6,
)


@st.composite
def _item(draw: st.DrawFn) -> dict[str, Any]:
    attributes = draw(st.dictionaries(_attribute_names, _values, max_size=6))
    return {"PK": {"S": draw(_text)}, "SK": {"S": draw(_text)}, **attributes}


def _capacity() -> st.SearchStrategy[dict[str, Any]]:
    units = st.one_of(st.integers(0, 400), st.floats(0, 400, allow_nan=False).map(float))
    return units.map(lambda u: {"TableName": TABLE, "CapacityUnits": u})


def _around(items: list[dict[str, Any]], draw: st.DrawFn) -> dict[str, Any]:
    """GetItem, Query and BatchGetItem responses around ``items``."""
    last = draw(st.one_of(st.none(), st.just({k: items[-1][k] for k in ("PK", "SK")})))
    consumed = draw(_capacity())
    query: dict[str, Any] = {
        "Items": items,
        "Count": len(items),
        "ScannedCount": draw(st.integers(len(items), 10_000)),
        "ConsumedCapacity": consumed,
    }
    if last is not None:
        query["LastEvaluatedKey"] = last
    unprocessed = draw(st.integers(0, len(items)))
    keys = [{k: i[k] for k in ("PK", "SK")} for i in items[:unprocessed]]
    batch = {
        "Responses": {TABLE: items[unprocessed:]},
        "UnprocessedKeys": {TABLE: {"Keys": keys}} if keys else {},
        "ConsumedCapacity": [consumed],
    }
    get = {"Item": items[0], "ConsumedCapacity": consumed} if draw(st.booleans()) else {}
    return {"GetItem": get, "Query": query, "BatchGetItem": batch, "ascii": draw(st.booleans())}


@st.composite
def _drawn_responses(draw: st.DrawFn) -> dict[str, Any]:
    """Every value drawn by Hypothesis: slow, but shrinks to the value at fault."""
    return _around(draw(st.lists(_item(), min_size=1, max_size=6)), draw)


@st.composite
def _seeded_responses(draw: st.DrawFn) -> dict[str, Any]:
    """Items built from one drawn seed: the bulk, thousands in a second or two."""
    values = WireValues(draw(st.integers(0, 2**64)))
    return _around([values.item() for _ in range(draw(st.integers(26, 34)))], draw)


def _check_one(responses: dict[str, Any]) -> int:
    """Both readings of each response; the items generated for them (the batch
    and the get read the query's items again)."""
    ascii_only = responses["ascii"]
    readings: dict[str, tuple[Callable[[dict[str, Any]], object], ...]] = {
        "GetItem": (_responses.get_result, reference.get_result),
        "Query": (_responses.query_result, reference.query_result),
        "BatchGetItem": (
            lambda r: _responses.batch_get_result(r, TABLE),
            lambda r: reference.batch_get_result(r, TABLE),
        ),
    }
    for operation, (new, old) in readings.items():
        body = json.dumps(responses[operation], ensure_ascii=ascii_only).encode()
        ours = new(orjson.loads(body))
        assert repr(ours) == repr(old(_botocore(operation, body))), body.decode()
        if operation == "Query":
            _check_request_bodies(ours.items)  # type: ignore[attr-defined]
    return len(responses["Query"]["Items"])


def _check_request_bodies(items: list[dict[str, Any]]) -> None:
    """What the data plane sends is what botocore's serializer would send."""
    operation = _MODEL.operation_model("PutItem")
    for item in items[:3]:
        parameters = {"TableName": TABLE, "Item": serialize_item(item)}
        expected = _SERIALIZER.serialize_to_request(parameters, operation)["body"]
        assert json.loads(encode_body(parameters)) == json.loads(expected)


def test_generated_responses_decode_as_botocore_and_the_codec_read_them(
    record_property: Callable[[str, object], None],
) -> None:
    decoded: list[int] = []
    for strategy, examples in ((_drawn_responses(), 40), (_seeded_responses(), 80)):

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(strategy)
        def check(responses: dict[str, Any]) -> None:
            decoded.append(_check_one(responses))

        check()
    record_property("decode_differential_items", sum(decoded))
    assert sum(decoded) >= GENERATED_ITEMS


@pytest.mark.parametrize(
    "number", ["-0", "0E+5", "1E+2", "1.50", "9" * 38, "-1." + "2" * 37 + "E-130", "1e125"]
)
def test_edge_numbers_decode_alike(number: str) -> None:
    body = json.dumps({"Item": {"PK": {"S": "a"}, "SK": {"S": "b"}, "n": {"N": number}}}).encode()
    ours = _responses.get_result(orjson.loads(body))
    assert repr(ours) == repr(reference.get_result(_botocore("GetItem", body)))


# -- error responses: the same exception, the same decisions


def _error(kind: str, message: str, **extra: Any) -> bytes:
    return json.dumps(
        {"__type": f"com.amazonaws.dynamodb.v20120810#{kind}", "message": message, **extra}
    ).encode()


_ITEM = {"PK": {"S": "COUNT"}, "SK": {"S": "ONE"}, "n": {"N": "1.50"}, "b": {"B": "AAE="}}
ERRORS = {
    "condition with item": (
        "UpdateItem",
        400,
        _error("ConditionalCheckFailedException", "The conditional request failed", Item=_ITEM),
    ),
    "cancelled with reasons": (
        "TransactWriteItems",
        400,
        json.dumps(
            {
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "Message": "Transaction cancelled, please refer cancellation reasons for "
                "specific reasons [None, ConditionalCheckFailed]",
                "CancellationReasons": [
                    {"Code": "None"},
                    {"Code": "ConditionalCheckFailed", "Message": "failed", "Item": _ITEM},
                ],
            }
        ).encode(),
    ),
    "cancelled by throttling": (
        "TransactWriteItems",
        400,
        json.dumps(
            {
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "Message": "Transaction cancelled [ThrottlingError]",
                "CancellationReasons": [{"Code": "ThrottlingError", "Message": "slow down"}],
            }
        ).encode(),
    ),
    "throughput exceeded": (
        "GetItem",
        400,
        _error("ProvisionedThroughputExceededException", "The level of configured ..."),
    ),
    "throttling": ("Query", 400, _error("ThrottlingException", "Rate of requests exceeds")),
    "validation (a limit)": (
        "PutItem",
        400,
        _error("ValidationException", "Item size has exceeded the maximum allowed size"),
    ),
    "validation (a bug)": (
        "Query",
        400,
        _error("ValidationException", "Invalid KeyConditionExpression: Syntax error"),
    ),
    "no table": (
        "BatchGetItem",
        400,
        _error("ResourceNotFoundException", "Requested resource not found"),
    ),
    "internal error": ("UpdateItem", 500, _error("InternalServerError", "Internal error")),
    "unavailable": ("GetItem", 503, b'{"__type":"ServiceUnavailable","message":"down"}'),
    "html 500": ("PutItem", 500, b"<html><body>Internal Server Error</body></html>"),
}
_METHODS = {
    "GetItem": "get_item",
    "Query": "query",
    "BatchGetItem": "batch_get_item",
    "PutItem": "put_item",
    "UpdateItem": "update_item",
    "TransactWriteItems": "transact_write_items",
}
_PARAMETERS: dict[str, dict[str, Any]] = {
    "GetItem": {"TableName": TABLE, "Key": _ITEM},
    "Query": {"TableName": TABLE, "KeyConditionExpression": "PK = :p"},
    "BatchGetItem": {"RequestItems": {TABLE: {"Keys": [_ITEM]}}},
    "PutItem": {"TableName": TABLE, "Item": _ITEM},
    "UpdateItem": {"TableName": TABLE, "Key": _ITEM},
    "TransactWriteItems": {"TransactItems": [{"Put": {"TableName": TABLE, "Item": _ITEM}}]},
}


@pytest.fixture(scope="module")
def canned() -> Any:
    with canned_dynamo() as server:
        yield server


@pytest.fixture
async def both(canned: Canned) -> AsyncIterator[tuple[Any, Wire]]:
    async with AsyncExitStack() as stack:
        connection = await connect(
            stack,
            region="us-east-1",
            endpoint_url=canned.url,
            access_key_id="local",
            secret_access_key="local",
        )
        wire = Wire.open(
            connection.client,
            connection.credentials,
            pool=4,
            connect_timeout=2,
            read_timeout=5,
        )
        stack.push_async_callback(wire.close)
        yield connection.client, wire


def _decisions(error: ClientError, operation: str) -> tuple[object, ...]:
    key = Key("COUNT", "ONE")
    mapped = (
        transaction_error(error, [Update(key, add={"n": 1}), Put({"PK": "A", "SK": "B"})])
        if operation == "TransactWriteItems"
        else translate(error, operation, key=key)
    )
    return (
        is_throttled(error),
        is_server_error(error),
        type(mapped).__name__,
        str(mapped),
        mapped.code,
        repr(getattr(mapped, "hint", None)),
        repr(getattr(mapped, "index", None)),
    )


def _comparable(error: ClientError) -> dict[str, Any]:
    response = dict(error.response)
    metadata = dict(response.pop("ResponseMetadata", {}))
    headers = dict(metadata.pop("HTTPHeaders", {}))
    headers.pop("date", None)  # the two answers were sent a moment apart
    headers.pop("server", None)
    return {**response, "ResponseMetadata": {**metadata, "HTTPHeaders": headers}}


@pytest.mark.parametrize("case", list(ERRORS))
async def test_error_responses_raise_what_the_client_raises(
    case: str, canned: Canned, both: tuple[Any, Wire]
) -> None:
    client, wire = both
    operation, status, body = ERRORS[case]
    canned.answer(status, body, "text/html" if body.startswith(b"<") else None)

    with pytest.raises(ClientError) as botocore_raised:
        await getattr(client, _METHODS[operation])(**_PARAMETERS[operation])
    with pytest.raises(ClientError) as wire_raised:
        await wire.call(operation, _PARAMETERS[operation])

    theirs, ours = botocore_raised.value, wire_raised.value
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)
    assert _comparable(ours) == _comparable(theirs)
    assert _decisions(ours, operation) == _decisions(theirs, operation)
