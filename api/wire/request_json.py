"""The JSON a client sends (a POST body, GET's ``variables`` and
``extensions``, a WebSocket message), decoded strictly.

``json.loads`` alone turns several wrong bodies into exceptions nobody maps:
bytes that are not UTF-8, an integer over Python's 4,300-digit conversion
limit (ValueError), nesting deep enough to exhaust the recursion limit
(RecursionError), a top level that is not an object, and ``\\ud800``-style
escapes that decode to lone surrogates, which no UTF-8 encoder (the store's,
the log's, the response's) will take. Each is refused here as the request's
fault, with BAD_USER_INPUT.

The error is a ``JSONDecodeError`` so Strawberry's WebSocket transports treat
it as the non-JSON message it is (close 4400); the HTTP view unwraps it.

A body is decoded by msgspec first (a verification's ~0.4 KB: ~3 us against
``json.loads``'s ~15 us with the UTF-8 decode): what it takes it decodes to
the value ``json.loads`` gives, integers of any size up to the same 4,300
digits included; anything it refuses (NaN, a lone surrogate escape, a BOM,
bad UTF-8, deep nesting, and every malformed body) goes the ``json.loads``
way, which accepts or refuses it in its own words, as before.
``tests/api/wire/test_request_json.py`` holds the two ways together.
"""

from __future__ import annotations

import json

import msgspec

from domain.errors import BadUserInput

__all__ = ["REQUEST_JSON_MAX_DEPTH", "MalformedJSON", "decode_request_json"]

# Generous for any operation's variables: JSON inputs are themselves capped
# at a depth of 8 (domain.validation), a few levels below the body.
REQUEST_JSON_MAX_DEPTH = 32
_HINT = 'Send one JSON object in UTF-8, e.g. {"query": "{ health { status } }"}.'


class MalformedJSON(json.JSONDecodeError):
    def __init__(self, error: BadUserInput) -> None:
        super().__init__(error.message, "", 0)
        self.error = error


_decode_fast = msgspec.json.Decoder().decode


def decode_request_json(data: str | bytes) -> dict[str, object]:
    try:
        value = _decode_fast(data)
    except Exception:  # json.loads decides, and says what is wrong
        value = _decode_with_json(data)
    return _checked(value, data)


def _decode_with_json(data: str | bytes) -> object:
    try:
        return json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
    except UnicodeDecodeError:
        raise _malformed("The request is not valid UTF-8") from None
    except RecursionError:
        raise _malformed(_too_deep()) from None
    except ValueError as error:  # JSONDecodeError, and integers over 4,300 digits
        raise _malformed(f"The request is not valid JSON: {_first_line(error)}") from None


def _checked(value: object, data: str | bytes) -> dict[str, object]:
    if not isinstance(value, dict):
        raise _malformed(f"The request must be a JSON object, not {_json_type(value)}")
    # ``find``, not ``in``: bytes' ``in`` tries the operand as an integer
    # first, a TypeError raised and cleared per body (~1,900 instructions).
    escaped = data.find(b"\\u") >= 0 if isinstance(data, bytes) else "\\u" in data
    if escaped and not _encodable(value):
        raise _malformed("The request holds an unpaired UTF-16 surrogate escape (\\ud800-\\udfff)")
    if _bracket_bound(data) > REQUEST_JSON_MAX_DEPTH and _depth_over(value):
        raise _malformed(_too_deep())
    return value


def _malformed(message: str) -> MalformedJSON:
    return MalformedJSON(BadUserInput(message, hint=_HINT))


def _too_deep() -> str:
    return f"The request nests JSON more than {REQUEST_JSON_MAX_DEPTH} levels deep"


def _first_line(error: ValueError) -> str:
    return str(error).splitlines()[0][:200]


def _json_type(value: object) -> str:
    names = {str: "a string", bool: "a boolean", list: "an array", type(None): "null"}
    return names.get(type(value), "a number")


def _encodable(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _bracket_bound(text: str | bytes) -> int:
    """No value nests deeper than the brackets it contains: a cheap test that
    spares nearly every request the walk below."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def _depth_over(value: object) -> bool:
    """Whether any object or array sits more than the limit deep (the top is 1)."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, dict):
            children: list[object] = list(node.values())
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > REQUEST_JSON_MAX_DEPTH:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False
