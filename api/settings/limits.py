"""The limits every operation is checked against before it runs.

``Limits`` is part of ``Settings`` (``settings.limits``); each field is
declared with the ``PROOFGATE_*`` variable it is read from
(``api.settings.declared``). The defaults are the ones a public deployment
needs; constructing ``Limits()`` directly gets the same, and a value built
directly is held to its variable's rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import BeforeValidator
from pydantic_settings import NoDecode

from api.settings.declared import Declared
from api.settings.environment import Malformed
from domain.errors import ConfigurationError
from domain.variables import variable

__all__ = [
    "ANONYMOUS_RATE",
    "AUTH_FAILURE_RATE",
    "DOCUMENT_CACHE_BYTES",
    "KEY_RATE",
    "MAX_ALIASES",
    "MAX_BODY_BYTES",
    "MAX_COST",
    "MAX_DEPTH",
    "MAX_READ_ITEMS",
    "MAX_READ_UNITS",
    "MAX_RESPONSE_BYTES",
    "MAX_TOKENS",
    "PERSISTED_QUERIES",
    "PRESETS",
    "SHARED_EVENTS",
    "SHARED_PAYLOAD_BYTES",
    "AuthFailures",
    "AuthVariables",
    "Execution",
    "Lane",
    "Lanes",
    "LimitVariables",
    "Limits",
    "Rate",
]

MAX_DEPTH = 10
MAX_ALIASES = 30
MAX_TOKENS = 2000
MAX_COST = 5000
MAX_BODY_BYTES = 1024 * 1024
MAX_READ_ITEMS = 2 * MAX_COST
"""Twice the cost budget: a query reads one item past its page (to know
``hasNextPage``), which the plan does not count (docs/design.md, Limits and cost)."""
MAX_READ_UNITS = 10_000
"""Read capacity units: a full budget of items averaging 4 KB, strongly consistent."""
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
PERSISTED_QUERIES = 1000
DOCUMENT_CACHE_BYTES = 32 * 1024 * 1024
SHARED_EVENTS = 256
"""Events kept for late subscribers of a fan-out; a few alerts' worth."""
SHARED_PAYLOAD_BYTES = 1024 * 1024
"""What the encoded payloads kept for the next sockets may take together."""


class Lane(StrEnum):
    """A fast path beside the library path it mirrors, each can be taken
    off alone (docs/design.md, Fast paths and their switches)."""

    ENTRY = "entry"
    """POST /graphql in one callable instead of the middleware stack."""
    PREPARED = "prepared"
    """A known document past Strawberry's view and extensions."""
    PLAN = "plan"
    """Compiled plans instead of graphql-core's executor."""
    FUSED = "fused"
    """A plan's scalar attributes written inline (needs ``plan``)."""
    PROJECTION = "projection"
    """A stored page's edges written from its items (needs ``plan``)."""
    PROTOCOL = "protocol"
    """The common HTTP request read and answered by a lean cycle instead of
    uvicorn's (``proofgate serve``'s; api/runtime/http_protocol.py)."""
    FANOUT = "fanout"
    """``threatAlerts`` over graphql-transport-ws delivered by one fan-out
    per alert instead of a task and stream per subscription (needs
    ``prepared`` and ``plan``)."""
    KEEPALIVE = "keepalive"
    """WebSocket keep-alives written as one frame made once, and pongs and
    client pings answered below Strawberry's handler (``proofgate serve``'s;
    api/ws/keepalive.py)."""


class Execution(StrEnum):
    """``PROOFGATE_EXECUTION``'s named sets of lanes: ``graphql-core`` is
    the operator's way back from compiled plans, should one ever answer
    differently; ``library`` runs every request the libraries' way."""

    COMPILED = "compiled"
    GRAPHQL_CORE = "graphql-core"
    LIBRARY = "library"


PRESETS: dict[Execution, frozenset[Lane]] = {
    Execution.COMPILED: frozenset(Lane),
    Execution.GRAPHQL_CORE: frozenset({Lane.ENTRY, Lane.PROTOCOL, Lane.KEEPALIVE}),
    Execution.LIBRARY: frozenset(),
}


def _lanes(value: object) -> frozenset[Lane]:
    """A preset, lane names, or both, comma-separated; ``-lane`` takes one
    off what the items before it put on: ``compiled,-projection``."""
    if isinstance(value, Execution):
        return PRESETS[value]
    if isinstance(value, frozenset | set) and all(isinstance(v, Lane) for v in value):
        return frozenset(value)
    if not isinstance(value, str):
        raise Malformed(f"must be a preset or lanes, got {value!r}")
    lanes: set[Lane] = set()
    for item in (part.strip().lower() for part in value.split(",")):
        name = item.removeprefix("-")
        if name in Execution.__members__.values():
            lanes |= PRESETS[Execution(name)]
        elif name in Lane.__members__.values():
            (lanes.discard if item.startswith("-") else lanes.add)(Lane(name))
        else:
            presets = ", ".join(Execution)
            names = ", ".join(Lane)
            raise Malformed(
                f"must be one of {presets}, or lanes ({names}) with -lane to take one off,"
                f" got {value!r}"
            )
    return frozenset(lanes)


Lanes = Annotated[frozenset[Lane], NoDecode, BeforeValidator(_lanes)]


@dataclass(frozen=True, kw_only=True)
class Rate:
    """A token bucket: ``burst`` calls at once, refilled at ``per_minute``."""

    per_minute: int
    burst: int

    def __post_init__(self) -> None:
        if self.per_minute < 1 or self.burst < 1:
            raise ConfigurationError("A rate needs per_minute and burst of at least 1")

    @property
    def per_second(self) -> float:
        return self.per_minute / 60


ANONYMOUS_RATE = Rate(per_minute=60, burst=20)
KEY_RATE = Rate(per_minute=600, burst=100)


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Operation, body and rate limits, introspection, APQ."""

    max_depth: int = variable(MAX_DEPTH, "max_depth")
    max_aliases: int = variable(MAX_ALIASES, "max_aliases")
    max_tokens: int = variable(MAX_TOKENS, "max_tokens")
    max_cost: int = variable(MAX_COST, "max_cost")
    """Budget of the reads an operation may plan, counted by ``api.limits.cost``."""
    max_body_bytes: int = variable(MAX_BODY_BYTES, "max_body_bytes")
    introspection: bool = variable(True, "introspection", format="switch")
    suggestions: bool = variable(True, "suggestions", format="switch")
    """"Did you mean ...?" in error messages, which spell out the schema."""
    rate_limit: int | None = variable(
        ANONYMOUS_RATE.per_minute, "rate_limit", format="per_minute_or_off"
    )
    """Public mutations by callers without a key, per client IP; None: unlimited."""
    rate_burst: int = variable(ANONYMOUS_RATE.burst, "rate_burst")
    key_rate_limit: int | None = variable(
        KEY_RATE.per_minute, "key_rate_limit", format="per_minute_or_off"
    )
    """Public mutations by BRAND and PARTNER keys, per key; None: unlimited.
    The operator (ADMIN) key is never limited."""
    key_rate_burst: int = variable(KEY_RATE.burst, "key_rate_burst")
    """A burst set alone keeps the default rate."""
    persisted_queries: int = variable(
        PERSISTED_QUERIES, "persisted_queries", format="entries_or_off"
    )
    """Entries of the automatic persisted query cache; 0 turns APQ off."""
    execution: frozenset[Lane] = variable(PRESETS[Execution.COMPILED], "execution", format="lanes")
    """The fast paths on (``Lane``); ``PROOFGATE_EXECUTION``, see ``_lanes``.
    Built directly it also takes a preset (``Execution.LIBRARY``) or its text."""
    document_cache_bytes: int = variable(
        DOCUMENT_CACHE_BYTES, "document_cache_bytes", format="entries_or_off"
    )
    """Memory the parsed and validated documents may hold; 0 caches none."""
    max_read_items: int = variable(MAX_READ_ITEMS, "max_read_items")
    """Items one query or mutation may read at run time (``storage.budget``)."""
    max_read_units: int = variable(MAX_READ_UNITS, "max_read_units")
    """Read capacity units one query or mutation may consume at run time."""
    max_response_bytes: int = variable(MAX_RESPONSE_BYTES, "max_response_bytes")
    """The encoded JSON bytes of one result's data (``api.graphql.execution.budget``)."""
    fanout_events: int = variable(SHARED_EVENTS, "fanout_events")
    """Subscription events whose results are kept for the next subscribers
    of a fan-out (``api.graphql.execution.fanout``); each a result over one
    event, within ``max_response_bytes``."""
    fanout_payload_bytes: int = variable(SHARED_PAYLOAD_BYTES, "fanout_payload_bytes")
    """The encoded payloads kept for the next sockets of a fan-out
    (``api.ws.frames``), together."""

    def __post_init__(self) -> None:
        LimitVariables.check(self)

    @property
    def anonymous_rate(self) -> Rate | None:
        return _rate(self.rate_limit, self.rate_burst)

    @property
    def key_rate(self) -> Rate | None:
        return _rate(self.key_rate_limit, self.key_rate_burst)


def _rate(per_minute: int | None, burst: int) -> Rate | None:
    return None if per_minute is None else Rate(per_minute=per_minute, burst=burst)


AUTH_FAILURE_RATE = Rate(per_minute=30, burst=10)
"""Failed authentications an address may make before it is refused
(``api.limits.auth_throttle``)."""


@dataclass(frozen=True, kw_only=True)
class AuthFailures:
    """Failed authentications an address may make (``api.limits.auth_throttle``)."""

    auth_failure_limit: int | None = variable(
        AUTH_FAILURE_RATE.per_minute, "auth_failure_limit", format="per_minute_or_off"
    )
    auth_failure_burst: int = variable(AUTH_FAILURE_RATE.burst, "auth_failure_burst")

    @property
    def rate(self) -> Rate | None:
        return _rate(self.auth_failure_limit, self.auth_failure_burst)


class LimitVariables(Declared, declares=Limits, formats={"lanes": Lanes}):
    pass


class AuthVariables(Declared, declares=AuthFailures):
    pass
