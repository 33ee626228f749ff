"""Each fast path's fallbacks to the library path it mirrors, by cause.

A fast path that quietly falls back still answers, only slower: a regression
shows up as lost speed and nothing else. So every fallback is counted here
by lane and cause, logged once per cause (with the exception, when one was
the cause), and ``Metrics`` reports the counts as
``proofgate_fast_path_fallbacks``
(docs/design.md, Fast paths and their switches). The counts are the
process's, as the lanes are: a fallback deep in a plan has no request's
metrics at hand.

A cause is a fixed name from the code, or an unexpected exception's class
name; past ``MAX_CAUSES`` distinct ones, the rest count as ``other``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

__all__ = ["MAX_CAUSES", "OTHER_CAUSE", "counts", "fell_back", "taken", "took", "unexpected"]

MAX_CAUSES = 64
OTHER_CAUSE = "other"

logger = logging.getLogger("proofgate.fallbacks")

_counts: dict[tuple[str, str], int] = {}
_taken: dict[str, int] = {}


def fell_back(lane: str, cause: str, error: BaseException | None = None) -> None:
    """``lane`` (``Lane``'s value) left this request, page or value to the
    library path, because of ``cause``."""
    key = (lane, cause)
    count = _counts.get(key)
    if count is None:
        if len(_counts) >= MAX_CAUSES:
            key = (lane, OTHER_CAUSE)
            count = _counts.get(key, 0)
        else:
            count = 0
            logger.warning(
                "Fast path %s fell back to the library path: %s (logged once per cause; "
                "proofgate_fast_path_fallbacks counts them)",
                lane,
                cause,
                exc_info=error,
            )
    _counts[key] = count + 1


def unexpected(lane: str, error: BaseException) -> None:
    """An exception the fast path did not expect: its class names the cause."""
    fell_back(lane, f"unexpected {type(error).__name__}", error)


def counts() -> Mapping[tuple[str, str], int]:
    """Every fallback since the process started, by lane and cause."""
    return _counts


def took(lane: str) -> None:
    """``lane`` answered a page itself: what its fallbacks are a share of
    (the projection's; the other lanes' requests are ``proofgate_requests``)."""
    _taken[lane] = _taken.get(lane, 0) + 1


def taken() -> Mapping[str, int]:
    return _taken
