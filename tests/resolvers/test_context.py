"""``request_context``: the one typed way to the gateway's request context
from an extension's ``execution_context.context``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace

import pytest
from starlette.requests import Request

from resolvers.context import RequestContext, request_context
from services.auth import Principal, Role
from storage import Storage
from storage.sqlite import open_sqlite
from tests._support.contexts import request_context as context_over


@pytest.fixture
async def storage() -> AsyncIterator[Storage]:
    store = await open_sqlite(":memory:", cursor_key=bytes(32))
    yield store
    await store.close()


def _context(storage: Storage, request: object = None) -> RequestContext:
    return context_over(storage, principal=Principal(Role.ADMIN), request=request)


async def test_a_request_context_is_itself(storage: Storage) -> None:
    context = _context(storage)
    assert request_context(context) is context


@pytest.mark.parametrize(
    "value",
    [None, {"request_id": "r1"}, SimpleNamespace(request_id="r1", principal=None)],
    ids=["none", "dict", "look-alike"],
)
def test_anything_else_is_no_context(value: object) -> None:
    """An operation run without the gateway's view (a schema executed by a
    test or a tool) has none, whatever it carries."""
    assert request_context(value) is None


async def test_the_client_host_comes_from_the_request(storage: Storage) -> None:
    scope = {"type": "http", "method": "POST", "headers": [], "client": ("203.0.113.9", 5)}
    assert _context(storage, Request(scope)).client_host == "203.0.113.9"
    assert _context(storage, Request({**scope, "client": None})).client_host is None
    assert _context(storage).client_host is None, "no request: an in-process caller"
