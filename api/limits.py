"""The limits every operation is checked against before it runs.

``Limits`` is part of ``Settings`` (``settings.limits``) and is read from its
own ``PROOFGATE_*`` variables by ``Limits.from_env``. The defaults are the ones
a public deployment needs; constructing ``Limits()`` directly gets the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from domain.errors import ConfigurationError

from ._environment import Environment, invalid

__all__ = [
    "ANONYMOUS_RATE",
    "DOCUMENT_CACHE_BYTES",
    "KEY_RATE",
    "MAX_ALIASES",
    "MAX_BODY_BYTES",
    "MAX_COST",
    "MAX_DEPTH",
    "MAX_TOKENS",
    "PERSISTED_QUERIES",
    "Limits",
    "Rate",
]

MAX_DEPTH = 10
MAX_ALIASES = 30
MAX_TOKENS = 2000
MAX_COST = 5000
MAX_BODY_BYTES = 1024 * 1024
PERSISTED_QUERIES = 1000
DOCUMENT_CACHE_BYTES = 32 * 1024 * 1024

_OFF = ("off", "false", "0", "no")
_ON = ("on", "true", "1", "yes")


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
    max_depth: int = MAX_DEPTH
    max_aliases: int = MAX_ALIASES
    max_tokens: int = MAX_TOKENS
    max_cost: int = MAX_COST
    """Budget of the reads an operation may plan, counted by ``api.cost``."""
    max_body_bytes: int = MAX_BODY_BYTES
    introspection: bool = True
    suggestions: bool = True
    """"Did you mean ...?" in error messages, which spell out the schema."""
    anonymous_rate: Rate | None = ANONYMOUS_RATE
    """Public mutations by callers without a key, per client IP; None: unlimited."""
    key_rate: Rate | None = KEY_RATE
    """Public mutations by BRAND and PARTNER keys, per key; None: unlimited.
    The operator (ADMIN) key is never limited."""
    persisted_queries: int = PERSISTED_QUERIES
    """Entries of the automatic persisted query cache; 0 turns APQ off."""
    document_cache_bytes: int = DOCUMENT_CACHE_BYTES
    """Memory the parsed and validated documents may hold; 0 caches none."""

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_aliases", "max_tokens", "max_cost", "max_body_bytes"):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"Limit {name} must be at least 1")
        for name in ("persisted_queries", "document_cache_bytes"):
            if getattr(self, name) < 0:
                raise ConfigurationError(f"Limit {name} must not be negative")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Limits:
        env = _Environment(environ)
        return cls(
            max_depth=env.positive("PROOFGATE_MAX_DEPTH", MAX_DEPTH),
            max_aliases=env.positive("PROOFGATE_MAX_ALIASES", MAX_ALIASES),
            max_tokens=env.positive("PROOFGATE_MAX_TOKENS", MAX_TOKENS),
            max_cost=env.positive("PROOFGATE_MAX_COST", MAX_COST),
            max_body_bytes=env.positive("PROOFGATE_MAX_BODY_BYTES", MAX_BODY_BYTES),
            introspection=env.switch("PROOFGATE_INTROSPECTION", True),
            suggestions=env.switch("PROOFGATE_SUGGESTIONS", True),
            anonymous_rate=env.rate("PROOFGATE_RATE_LIMIT", "PROOFGATE_RATE_BURST", ANONYMOUS_RATE),
            key_rate=env.rate("PROOFGATE_KEY_RATE_LIMIT", "PROOFGATE_KEY_RATE_BURST", KEY_RATE),
            persisted_queries=env.count("PROOFGATE_PERSISTED_QUERIES", PERSISTED_QUERIES),
            document_cache_bytes=env.count("PROOFGATE_DOCUMENT_CACHE_BYTES", DOCUMENT_CACHE_BYTES),
        )


class _Environment(Environment):
    """The readers only limits use: counts, switches and rates, each with ``off``."""

    def count(self, name: str, default: int) -> int:
        """A non-negative integer, where ``off`` is 0."""
        value = self.get(name)
        if value is None:
            return default
        if value.lower() in _OFF:
            return 0
        if not value.isdigit():
            raise invalid(name, f"must be a number of entries or off, got {value!r}")
        return int(value)

    def switch(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if value is None:
            return default
        if value.lower() in _ON:
            return True
        if value.lower() in _OFF:
            return False
        raise invalid(name, f"must be on or off, got {value!r}")

    def rate(self, name: str, burst_name: str, default: Rate) -> Rate | None:
        value = self.get(name)
        burst = self.positive(burst_name, default.burst)
        if value is None:
            return Rate(per_minute=default.per_minute, burst=burst)
        if value.lower() in _OFF:
            return None
        if not value.isdigit() or int(value) < 1:
            raise invalid(name, f"must be calls per minute or off, got {value!r}")
        return Rate(per_minute=int(value), burst=burst)
