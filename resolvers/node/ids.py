"""Global ids: the GraphQL type name and the object's own id, base64 of
``Type:id`` (Strawberry's ``GlobalID``, the encoding Relay servers use).

A global id is opaque to clients but says its type, so ``node(id:)`` knows
which access pattern to read without trying several
(docs/design.md, "Global object identification").
"""

from __future__ import annotations

from strawberry.relay import GlobalID
from strawberry.relay.types import GlobalIDValueError

from domain.errors import BadUserInput

__all__ = ["GLOBAL_ID_MAX_CHARS", "global_id", "parse_global_id"]

GLOBAL_ID_MAX_CHARS = 256
"""Longer than any id the API mints (a threat alert's is the longest)."""
_HINT = "Use a nodeId returned by the API."


def global_id(type_name: str, raw_id: str) -> str:
    return str(GlobalID(type_name, raw_id))


def parse_global_id(text: object) -> tuple[str, str]:
    """``(type name, raw id)``. Only the canonical spelling is accepted: base64
    decoders skip stray characters, and two spellings of one id would be two
    cache keys for one object in a client."""
    if not isinstance(text, str) or not text or len(text) > GLOBAL_ID_MAX_CHARS:
        raise BadUserInput("Invalid node id", hint=_HINT)
    try:
        parsed = GlobalID.from_id(text)
    except (GlobalIDValueError, ValueError):
        raise BadUserInput("Invalid node id", hint=_HINT) from None
    if not parsed.type_name or not parsed.node_id or str(parsed) != text:
        raise BadUserInput("Invalid node id", hint=_HINT)
    return parsed.type_name, parsed.node_id
