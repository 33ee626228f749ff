"""Shared fixtures: the moto server for the DynamoDB backend, a redis-server, and
the Scan tripwire.

The gateway must never Scan. The tripwire sits at both ends of the wire: every
botocore/aiobotocore client refuses the call, and moto's own Scan (and PartiQL)
handlers refuse the request, whoever sent it. Each refusal is recorded, and a
test during which one happened fails even if the code under test swallowed the
error.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from aiobotocore.client import AioBaseClient
from botocore.client import BaseClient
from hypothesis import settings
from moto.dynamodb.exceptions import MockValidationException
from moto.dynamodb.responses import DynamoHandler
from moto.server import ThreadedMotoServer
from pydantic import BaseModel

from api.settings.limits import Execution, Limits, LimitVariables
from bench._moto import honour_request_tokens, serialize_moto
from storage.dynamodb import _client as dynamodb_client
from tests._support import moto_tables
from tests._support.redis_server import RedisServer, redis_binary

# Hypothesis's default deadline fails an example that takes 200 ms of wall
# time: a timing assertion, which a loaded run (two workers, moto, other
# processes on two cores) broke in tests that assert nothing about speed.
# Speed is measured in bench/; here every example may take what it takes.
settings.register_profile("proofgate", deadline=None)
settings.load_profile("proofgate")

TEST_EXECUTION = "PROOFGATE_TEST_EXECUTION"
"""``PROOFGATE_TEST_EXECUTION=library pytest tests``: the suite with the fast
paths off (or any ``PROOFGATE_EXECUTION`` value). Every gateway a test builds
without naming its lanes gets these, in this process (the default of
``Limits.execution``) and in those ``tests/api/_serve.py`` starts: the
library path answers everything the fast paths do
(docs/design.md, Fast paths and their switches)."""


def _default_lanes(value: str | None) -> None:
    if not value:
        return
    lanes = Limits(execution=value).execution
    # The dataclass's own default (its __init__'s), then the readers' made from it.
    Limits.__init__.__kwdefaults__["execution"] = lanes
    classes: list[type[BaseModel]] = [LimitVariables]
    while classes:
        section = classes.pop()
        section.model_fields["execution"].default = lanes
        section.model_rebuild(force=True)
        classes += section.__subclasses__()


_default_lanes(os.environ.get(TEST_EXECUTION))


@pytest.fixture(scope="module", autouse=True)
def _lanes_of_the_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module marked ``fast_paths`` tests the lanes themselves (that they
    are taken, what they answer against the library path): its gateways
    take every lane whatever ``PROOFGATE_TEST_EXECUTION`` says."""
    value = os.environ.get(TEST_EXECUTION)
    if not value or request.node.get_closest_marker("fast_paths") is None:
        yield
        return
    _default_lanes(Execution.COMPILED)
    try:
        yield
    finally:
        _default_lanes(value)


CACHED_SUITE = os.environ.get("CACHED_SUITE") == "1"
"""``CACHED_SUITE=1 make test``: every store a gateway opens (``open_storage``)
sits behind the exact cache whatever its settings say, so the suites that
run the app check that the cache changes no answer (docs/design.md, Storage cache)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``CACHED_SUITE``, a test that pins how many storage calls a
    request makes is skipped, by its mark: the cache exists to make fewer.
    Every other test must give the same answers (docs/design.md, Storage cache)."""
    if not CACHED_SUITE:
        return
    skip = pytest.mark.skip(reason="counts storage calls, which the cache saves (CACHED_SUITE=1)")
    for item in items:
        if item.get_closest_marker("storage_calls") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _cached_suite() -> Iterator[None]:
    if not CACHED_SUITE:
        yield
        return
    from api.runtime import backend
    from storage.cache import CachedStorage

    def always(storage: Any, settings: Any) -> Any:
        return CachedStorage(
            storage, max_bytes=settings.cache_bytes, ttl_seconds=settings.cache_ttl_ms / 1000
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(backend, "cached", always)
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Iterator[None]:
    """The moto tables a fixture makes are dropped after its own teardown
    (``tests/_support/moto_tables.py``)."""
    made: set[moto_tables.Table] = set()
    # Registered before the fixture runs, so it runs after the fixture's
    # teardown, which is registered as it runs.
    fixturedef.addfinalizer(lambda: moto_tables.drop(made))
    before = moto_tables.existing()
    yield
    made.update(moto_tables.claim(before))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call() -> Iterator[None]:
    before = moto_tables.existing()
    yield
    _made_by_the_test.update(moto_tables.claim(before))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown() -> Iterator[None]:
    """The moto tables a test made itself (a CLI it ran, a gateway it
    started) go once its fixtures are torn down."""
    yield
    moto_tables.drop(_made_by_the_test)
    _made_by_the_test.clear()
    moto_tables.forget_instances()


_made_by_the_test: set[moto_tables.Table] = set()


FORBIDDEN_DYNAMODB_OPERATIONS = frozenset(
    {"Scan", "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction"}
)
_FORBIDDEN_HANDLERS = (
    "scan",
    "execute_statement",
    "batch_execute_statement",
    "execute_transaction",
)


class ScanTripwire:
    def __init__(self, unguarded_call: Callable[..., Awaitable[Any]]) -> None:
        self._lock = threading.Lock()
        self.calls: list[str] = []
        # aiobotocore's own _make_api_call, for the test that proves the
        # backend's clients refuse Scan without this tripwire's help.
        self.unguarded_call = unguarded_call

    def trip(self, where: str) -> None:
        with self._lock:
            self.calls.append(where)

    @contextmanager
    def expected(self) -> Iterator[list[str]]:
        """For the tests that prove the tripwire works: collect (and clear) the
        refusals made inside the block."""
        with self._lock:
            start = len(self.calls)
        caught: list[str] = []
        try:
            yield caught
        finally:
            with self._lock:
                caught.extend(self.calls[start:])
                del self.calls[start:]


@pytest.fixture(scope="session", autouse=True)
def scan_tripwire() -> Iterator[ScanTripwire]:
    async_call = AioBaseClient._make_api_call
    sync_call = BaseClient._make_api_call
    tripwire = ScanTripwire(async_call)

    def check(client: Any, operation: str) -> None:
        if (
            client.meta.service_model.service_name == "dynamodb"
            and operation in FORBIDDEN_DYNAMODB_OPERATIONS
        ):
            tripwire.trip(f"client:{operation}")
            raise AssertionError(
                f"DynamoDB {operation} issued during tests; the gateway must never scan"
            )

    async def guarded_async(self: Any, operation_name: str, api_params: Any) -> Any:
        check(self, operation_name)
        return await async_call(self, operation_name, api_params)

    def guarded_sync(self: Any, operation_name: str, api_params: Any) -> Any:
        check(self, operation_name)
        return sync_call(self, operation_name, api_params)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AioBaseClient, "_make_api_call", guarded_async)
        patch.setattr(BaseClient, "_make_api_call", guarded_sync)
        _refuse_on_server(tripwire, patch)
        yield tripwire
    assert not tripwire.calls, f"DynamoDB scans were issued during the session: {tripwire.calls}"


@pytest.fixture(autouse=True)
def _fail_on_scan(scan_tripwire: ScanTripwire) -> Iterator[None]:
    before = len(scan_tripwire.calls)
    yield
    if len(scan_tripwire.calls) > before:
        pytest.fail(f"This test issued a DynamoDB scan: {scan_tripwire.calls[before:]}")


def _refuse_on_server(tripwire: ScanTripwire, patch: pytest.MonkeyPatch) -> None:
    for handler in _FORBIDDEN_HANDLERS:

        def refuse(self: Any, *_: Any, _handler: str = handler, **__: Any) -> Any:
            tripwire.trip(f"server:{_handler}")
            raise MockValidationException(f"{_handler} is forbidden in proofgate's tests")

        patch.setattr(DynamoHandler, handler, refuse)


MOTO_READ_TIMEOUT_SECONDS = dynamodb_client.MAX_POOL_CONNECTIONS * 2.0
"""The read timeout of clients on the test's moto server. Moto answers one
call at a time (``serialize_moto``), so a call's answer waits for every call
queued before it, up to a client's whole pool: 50 concurrent verifications
and their relay kept 51 calls in flight, and on a machine at load 8-15 the
last waited 12 s, past the 10 s DynamoDB's own latency warrants
(``storage.dynamodb._client``), until retries ran out. Two seconds a queued
call, for the deepest queue a pool allows."""
MOTO_CONNECT_TIMEOUT_SECONDS = 30.0
"""The server runs in the test's own process, so its accept loop waits for
the GIL behind the test and moto's serialized calls; a clean run at load
saw a connection to it take over the 2 s DynamoDB's endpoint warrants
(``storage.dynamodb._client``). A refused or unreachable endpoint still
fails at once: the timeout bounds only a connection the server is slow to
take."""


@pytest.fixture(scope="session")
def moto_endpoint(scan_tripwire: ScanTripwire) -> Iterator[str]:
    """A moto server on a free loopback port, with dummy credentials in the environment.

    For tests only: moto deep-copies the table on every transactional write, so
    a long-lived moto grows to gigabytes and slows to timeouts; a laptop store
    is DynamoDB Local (docs/operations.md, DynamoDB on your laptop).

    Depends on the tripwire so the server's Scan handlers are refused before it starts."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SECURITY_TOKEN": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
        }.items():
            patch.setenv(name, value)
        patch.delenv("AWS_PROFILE", raising=False)
        requests_log = logging.getLogger("werkzeug")
        level = requests_log.level
        requests_log.setLevel(logging.ERROR)
        # Every test app runs a relay that writes in the background, so every
        # suite on the moto server needs moto's tables locked.
        serialize_moto(patch)
        honour_request_tokens(patch)
        patch.setattr(dynamodb_client, "READ_TIMEOUT_SECONDS", MOTO_READ_TIMEOUT_SECONDS)
        patch.setattr(dynamodb_client, "CONNECT_TIMEOUT_SECONDS", MOTO_CONNECT_TIMEOUT_SECONDS)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            yield f"http://{host}:{port}"
        finally:
            server.stop()
            requests_log.setLevel(level)


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A fresh redis-server per test (tests kill it), persistence off."""
    binary = redis_binary()
    if binary is None:
        pytest.skip("redis-server is not installed (Debian package redis-server; .ci/run adds it)")
    server = RedisServer(binary).start()
    try:
        yield server
    finally:
        server.stop()


_FUZZED = {
    "fuzz_operations": "generated operations",
    "fuzz_tools": "generated MCP tool calls",
    "fuzz_ingest": "generated /ingest posts",
}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The schema fuzz's counts (``tests/api/graphql/test_schema_fuzz.py``) and the decode
    differential's (``tests/storage/dynamodb/test_dynamodb_wire_differential.py``),
    in the CI log."""
    for report in terminalreporter.getreports("passed"):
        for name, value in report.user_properties:
            if name == "decode_differential_items":
                terminalreporter.write_line(
                    f"decode differential: {value} generated items read by the data plane "
                    "and by botocore + the codec, alike"
                )
            if name.startswith("fuzz_"):
                what = _FUZZED.get(name, "malformed bodies")
                terminalreporter.write_line(
                    f"schema fuzz: {value} {what} sent: no 5xx, no INTERNAL_SERVER_ERROR, "
                    "no error logged, no other brand's data"
                )
