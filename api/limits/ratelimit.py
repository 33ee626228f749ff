"""Rate limits on the public mutations: token buckets, in process.

``verifyProduct``, ``claimProduct`` and ``disputeClaim`` need no key, so they
are what a script hammers; ``ingestEvent`` is what a partner's system sends in
bulk (and ``POST /ingest/<source>`` takes from the same bucket as its key's
``ingestEvent``, through ``RateCheck``). Each call (an aliased field counts
once per alias) takes a token from a bucket:

- callers without a key: one bucket per client IP (``Limits.anonymous_rate``);
- BRAND, PARTNER and ingest keys: one bucket per key (``Limits.key_rate``),
  higher by default because a key stands for an app serving many people;
- the operator (ADMIN) key: not limited.

Operations that never reach a client address (executed in process) are not
limited. Behind a reverse proxy, run uvicorn with ``--proxy-headers`` and
``--forwarded-allow-ips`` so the client address is the caller's, not the
proxy's. Buckets live in this process (N processes allow N times the rate)
unless Redis is configured: then ``api.limits.shared_ratelimit`` keeps them there.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    SelectionSetNode,
    get_operation_ast,
)
from starlette.responses import Response
from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from api.limits.refuse_operation import refuse
from api.settings.limits import Rate
from domain.errors import RateLimited
from resolvers.context import request_context
from services.auth import Principal, Role

__all__ = [
    "MAX_BUCKETS",
    "PUBLIC_MUTATIONS",
    "RateCheck",
    "RateLimit",
    "RateLimiter",
    "check_batch",
    "public_calls",
    "too_many",
]

PUBLIC_MUTATIONS = frozenset({"verifyProduct", "claimProduct", "disputeClaim", "ingestEvent"})
MAX_BUCKETS = 100_000
"""Buckets kept at once; past it the least recently used is dropped, which
only ever forgives that caller its debt."""


RateCheck = Callable[[Principal, str | None, int], Awaitable[None]]
"""Takes calls from a caller's bucket or raises RATE_LIMITED: what an endpoint
outside GraphQL uses to share the buckets of the schema's limiter."""


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    def __init__(
        self,
        anonymous: Rate | None,
        keyed: Rate | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_buckets: int = MAX_BUCKETS,
    ) -> None:
        self.anonymous = anonymous
        self.keyed = keyed
        self._clock = clock
        self._max_buckets = max_buckets
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def bucket(self, principal: Principal, client: str | None) -> tuple[Rate, str] | None:
        """The caller's rate and bucket name; None when the caller is not limited."""
        if principal.role is Role.ADMIN or client is None:
            return None
        if principal.key_hash is not None:
            rate, key = self.keyed, f"key:{principal.key_hash}"
        else:
            rate, key = self.anonymous, f"ip:{client}"
        return None if rate is None else (rate, key)

    def check(self, principal: Principal, client: str | None, calls: int) -> None:
        """Take ``calls`` tokens from the caller's bucket, or raise RATE_LIMITED
        with ``retryAfter``: the seconds until that many are back."""
        chosen = self.bucket(principal, client)
        if chosen is None:
            return
        rate, key = chosen
        check_batch(rate, calls)
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(rate.burst), now)
            if len(self._buckets) > self._max_buckets:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket.tokens = min(
                float(rate.burst), bucket.tokens + (now - bucket.updated) * rate.per_second
            )
            bucket.updated = now
        if bucket.tokens < calls:
            raise too_many(rate, calls, bucket.tokens)
        bucket.tokens -= calls

    async def take(self, principal: Principal, client: str | None, calls: int) -> None:
        """``check`` as a ``RateCheck``."""
        self.check(principal, client, calls)


def check_batch(rate: Rate, calls: int) -> None:
    if calls > rate.burst:
        raise RateLimited(
            f"At most {rate.burst} public mutations fit in one request, got {calls}",
            hint="Send them in several requests.",
        )


def too_many(rate: Rate, calls: int, tokens: float) -> RateLimited:
    wait = math.ceil((calls - tokens) / rate.per_second * 1000) / 1000
    return RateLimited(
        "Too many requests",
        hint=f"Retry after {wait} seconds; {rate.per_minute} per minute are allowed.",
        retryAfter=wait,
    )


class RateLimit(SchemaExtension):
    """Counts the public mutations an operation calls and refuses it, before
    anything runs, when the caller's bucket is short. Over HTTP the refusal is
    a 429 with ``Retry-After``."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter

    def on_execute(self) -> None:  # type: ignore[override]
        calls = self._calls()
        if calls is not None:
            try:
                self.limiter.check(*calls)
            except RateLimited as error:
                self._refuse(error)

    def _calls(self) -> tuple[Principal, str, int] | None:
        """Who calls how many public mutations, if this operation calls any."""
        execution_context = self.execution_context
        document = execution_context.graphql_document
        if (
            execution_context.result is not None
            or document is None
            or execution_context.operation_type is not OperationType.MUTATION
        ):
            return None
        context = request_context(execution_context.context)
        host = context.client_host if context is not None else None
        if context is None or host is None:
            return None
        calls = public_calls(document, execution_context.operation_name)
        return (context.principal, host, calls) if calls else None

    def _refuse(self, error: RateLimited) -> None:
        execution_context = self.execution_context
        context = request_context(execution_context.context)
        response = context.response if context is not None else None
        wait = error.extensions.get("retryAfter")
        if isinstance(response, Response) and wait is not None:
            response.status_code = 429
            response.headers["Retry-After"] = str(math.ceil(wait))
        refuse(execution_context, error)


def public_calls(document: DocumentNode, operation_name: str | None) -> int:
    operation = get_operation_ast(document, operation_name)
    if operation is None:
        return 0
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    return sum(1 for _ in _root_fields(operation.selection_set, fragments, set()))


def _root_fields(
    selection_set: SelectionSetNode,
    fragments: dict[str, FragmentDefinitionNode],
    visited: set[str],
) -> Iterator[FieldNode]:
    """The public mutation fields at the root, through fragments. ``@skip``
    is not evaluated: a skipped call still counts, which errs on the safe side."""
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            if selection.name.value in PUBLIC_MUTATIONS:
                yield selection
        elif isinstance(selection, InlineFragmentNode):
            yield from _root_fields(selection.selection_set, fragments, visited)
        elif isinstance(selection, FragmentSpreadNode) and selection.name.value not in visited:
            visited.add(selection.name.value)
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                yield from _root_fields(fragment.selection_set, fragments, visited)
