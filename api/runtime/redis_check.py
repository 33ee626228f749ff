"""Whether ``PROOFGATE_REDIS_URL`` answers before ``serve`` says it is up.

Redis lost while serving is an outage the gateway rides out (the table tail,
per-process limits; docs/operations.md). Redis unreachable at start-up is
more often a typo in the URL or a firewall, and a fleet started that way runs
degraded without anyone having decided it: so ``serve`` refuses, with one
line, unless ``PROOFGATE_REDIS_START_DEGRADED=1`` says degraded is fine.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit, urlunsplit

from domain.errors import ConfigurationError

__all__ = ["check_redis", "redacted"]

logger = logging.getLogger("proofgate.api")

CONNECT_SECONDS = 2.0
_HINT = (
    "Start Redis or correct PROOFGATE_REDIS_URL; PROOFGATE_REDIS_START_DEGRADED=1 starts "
    "without it (alerts through the table, limits per process) and connects when it can."
)


def redacted(url: str) -> str:
    """The URL without its password: errors and logs never carry a secret."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = f"{parts.username}:***@" if parts.username else "***@"
    host = parts.hostname or ""
    netloc = f"{user}{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


async def check_redis(url: str | None, *, degraded_allowed: bool) -> None:
    if url is None:
        return
    from redis.asyncio import Redis
    from redis.exceptions import RedisError

    client = Redis.from_url(
        url, socket_connect_timeout=CONNECT_SECONDS, socket_timeout=CONNECT_SECONDS
    )
    try:
        await client.ping()
    except (RedisError, OSError) as error:
        where = redacted(url)
        if not degraded_allowed:
            raise ConfigurationError(
                f"Cannot reach Redis at {where} (PROOFGATE_REDIS_URL): {error}", hint=_HINT
            ) from None
        logger.warning("Redis at %s is unreachable (%s); starting degraded", where, error)
    finally:
        await client.aclose()
