"""Key codec: builds key strings from templates, never changing a value.

A template such as ``"EVENT#{sequence:int}"`` is compiled once (like a
starlette route path) into literal parts and converters; request-time code only
fills in values. Converters:

- ``str`` (default): the value verbatim, except that ``%`` and ``#`` are
  percent-escaped so a value can never forge a separator and no two inputs map
  to one key. Case is never folded.
- ``int``: zero-padded to ``INT_WIDTH`` digits, so lexicographic order equals
  numeric order.
- ``time``: a UTC datetime as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; fixed width so
  lexicographic order equals time order.

A placeholder is followed by ``#`` or ends the template: an encoded value never
contains ``#``, so every key has exactly one reading.

``format`` spells a key whose values are all plain (text the ``str``
converter returns unchanged, an int in range, a datetime already in UTC)
directly, as most keys are; any other value takes the general path, so keys
and errors stay the converters' (docs/design.md, "Storage").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any, NamedTuple

from domain.errors import AccessPatternError, LimitExceeded

from .limits import PARTITION_KEY_MAX_BYTES, SORT_KEY_MAX_BYTES

__all__ = [
    "INT_WIDTH",
    "PLAIN_MAX_CHARS",
    "SEPARATOR",
    "Key",
    "KeyTemplate",
    "check_key",
    "decode_int",
    "decode_str",
    "decode_time",
    "encode_int",
    "encode_str",
    "encode_time",
]

SEPARATOR = "#"
INT_WIDTH = 12
INT_MAX = 10**INT_WIDTH - 1
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_TIME_WIDTH = len("2000-01-01T00:00:00.000000Z")
_TIME_TEXT = "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ"


class Key(NamedTuple):
    """A table primary key."""

    pk: str
    sk: str


def encode_str(value: str) -> str:
    if not isinstance(value, str):
        raise AccessPatternError(f"Expected a string key value, got {type(value).__name__}")
    if not value:
        raise LimitExceeded("Key values must not be empty")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise LimitExceeded("Key values must be valid Unicode (no lone surrogates)") from None
    return value.replace("%", "%25").replace(SEPARATOR, "%23")


def decode_str(encoded: str) -> str:
    if SEPARATOR in encoded:
        raise ValueError(f"{encoded!r} is not an encoded key value")
    return encoded.replace("%23", SEPARATOR).replace("%25", "%")


def encode_int(value: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise AccessPatternError(f"Expected an int key value, got {type(value).__name__}")
    if not 0 <= value <= INT_MAX:
        raise LimitExceeded(f"Key integer {value} outside 0..{INT_MAX}")
    return f"{value:0{INT_WIDTH}d}"


def decode_int(encoded: str) -> int:
    if len(encoded) != INT_WIDTH or not (encoded.isascii() and encoded.isdigit()):
        raise ValueError(f"{encoded!r} is not a {INT_WIDTH}-digit key integer")
    return int(encoded)


def encode_time(value: datetime) -> str:
    if type(value) is datetime and value.tzinfo is UTC:
        # Already UTC, the common case: no conversion, and %-formatting,
        # the cheapest of the ways measured.
        return _TIME_TEXT % (
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
        )
    if not isinstance(value, datetime):
        raise AccessPatternError(f"Expected a datetime key value, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise AccessPatternError("Key timestamps must be timezone-aware")
    try:
        utc = value.astimezone(UTC)
    except OverflowError:
        raise LimitExceeded("Key timestamp is outside the years 1..9999 in UTC") from None
    # Not strftime: its %Y does not zero-pad years before 1000 on glibc.
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T"
        f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}.{utc.microsecond:06d}Z"
    )


def decode_time(encoded: str) -> datetime:
    if len(encoded) != _TIME_WIDTH:
        raise ValueError(f"{encoded!r} is not a key timestamp")
    return datetime.strptime(encoded, _TIME_FORMAT).replace(tzinfo=UTC)


_CONVERTERS: dict[str, Callable[[Any], str]] = {
    "str": encode_str,
    "int": encode_int,
    "time": encode_time,
}
_DECODERS: dict[str, Callable[[str], Any]] = {
    "str": decode_str,
    "int": decode_int,
    "time": decode_time,
}
_FIXED_WIDTHS = {"int": INT_WIDTH, "time": _TIME_WIDTH}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


# UTF-8 spends at most 4 bytes on a character: shorter keys need no encoding.
_PK_SAFE_CHARS = PARTITION_KEY_MAX_BYTES // 4
_SK_SAFE_CHARS = SORT_KEY_MAX_BYTES // 4


def check_key(key: Key) -> Key:
    """Refuse keys DynamoDB would refuse, so both backends fail alike."""
    pk, sk = key
    if not pk or not sk:
        raise LimitExceeded("Key attributes must not be empty")
    if len(pk) <= _PK_SAFE_CHARS and len(sk) <= _SK_SAFE_CHARS:
        return key
    if len(key.pk.encode("utf-8")) > PARTITION_KEY_MAX_BYTES:
        raise LimitExceeded(f"Partition key longer than {PARTITION_KEY_MAX_BYTES} bytes")
    if len(key.sk.encode("utf-8")) > SORT_KEY_MAX_BYTES:
        raise LimitExceeded(f"Sort key longer than {SORT_KEY_MAX_BYTES} bytes")
    return key


@dataclass(frozen=True)
class _Field:
    name: str
    converter: str


PLAIN_MAX_CHARS = 200
"""The longest plain text value: far below what a key may hold in UTF-8
(``storage.limits``), so a key made of a few plain values is short too."""


_PLAIN: dict[str, tuple[str, str]] = {
    # converter: (when a value ``$`` is plain, its encoding then)
    "str": (
        "type($) is str and 0 < len($) <= PLAIN_MAX_CHARS and $.isascii()"
        " and SEPARATOR not in $ and '%' not in $",
        "$",
    ),
    "int": ("type($) is int and 0 <= $ <= INT_MAX", "f'{$:0" + str(INT_WIDTH) + "d}'"),
    "time": (
        "type($) is datetime and $.tzinfo is UTC",
        "_TIME_TEXT % ($.year, $.month, $.day, $.hour, $.minute, $.second, $.microsecond)",
    ),
}
"""Plain values: text ``encode_str`` returns unchanged (ASCII, no ``#`` or
``%``, not empty), an int in range (``bool`` is not ``int``), a datetime
already in UTC; each spelled exactly as its converter spells it."""


def _plain_format(
    parts: tuple[str | _Field, ...], general: Callable[[Mapping[str, Any]], str]
) -> Callable[[Mapping[str, Any]], str]:
    """One straight-line function per template, compiled once as
    ``namedtuple`` and ``dataclasses`` compile theirs: the key spelled in one
    expression when every value is plain, ``general`` otherwise. Names are
    identifiers and literals go in as ``repr``, so no value reaches the source."""
    reads: list[str] = []
    tests: list[str] = []
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, str):
            pieces.append(repr(part))
            continue
        value = f"v{len(reads)}"
        test, text = _PLAIN[part.converter]
        reads.append(f"        {value} = params[{part.name!r}]\n")
        tests.append(f"({test.replace('$', value)})")
        pieces.append(f"({text.replace('$', value)})")
    if not reads:
        constant = "".join(parts)  # type: ignore[arg-type]
        return lambda params: constant
    source = (
        "def format(params):\n"
        + "    try:\n"
        + "".join(reads)
        + "    except KeyError:\n"
        + "        return general(params)\n"
        + f"    if {' and '.join(tests)}:\n"
        + f"        return {' + '.join(pieces)}\n"
        + "    return general(params)\n"
    )
    namespace: dict[str, Any] = {
        "general": general,
        "datetime": datetime,
        "UTC": UTC,
        "PLAIN_MAX_CHARS": PLAIN_MAX_CHARS,
        "SEPARATOR": SEPARATOR,
        "INT_MAX": INT_MAX,
        "_TIME_TEXT": _TIME_TEXT,
    }
    exec(source, namespace)
    format_plain: Callable[[Mapping[str, Any]], str] = namespace["format"]
    return format_plain


@dataclass(frozen=True, init=False)
class KeyTemplate:
    """A compiled key template. ``format`` fills it; ``parse`` reverses it."""

    source: str
    parts: tuple[str | _Field, ...]
    params: tuple[str, ...] = field(init=False, compare=False)
    format: Callable[[Mapping[str, Any]], str] = field(init=False, compare=False, repr=False)

    def __init__(self, source: str) -> None:
        literal = _PLACEHOLDER.sub("", source)
        if not source or "{" in literal or "}" in literal:
            raise AccessPatternError(f"Template {source!r} is malformed")
        parts: list[str | _Field] = []
        position = 0
        for match in _PLACEHOLDER.finditer(source):
            if match.start() > position:
                parts.append(source[position : match.start()])
            name, _, converter = match.group(1).partition(":")
            converter = converter or "str"
            if not name.isidentifier():
                raise AccessPatternError(
                    f"Template {source!r}: placeholder {match.group()!r} names no parameter"
                )
            if converter not in _CONVERTERS:
                raise AccessPatternError(f"Template {source!r}: unknown converter {converter!r}")
            parts.append(_Field(name, converter))
            position = match.end()
        if position < len(source):
            parts.append(source[position:])
        for part, following in pairwise(parts):
            # Encoded values never contain the separator, so a field that ends at
            # one can neither be forged by a value nor parsed ambiguously.
            if isinstance(part, _Field) and not (
                isinstance(following, str) and following.startswith(SEPARATOR)
            ):
                raise AccessPatternError(
                    f"Template {source!r}: a placeholder must be followed by {SEPARATOR!r}"
                    " or end the template"
                )
        names = [p.name for p in parts if isinstance(p, _Field)]
        if len(names) != len(set(names)):
            raise AccessPatternError(f"Template {source!r} repeats a parameter")
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "parts", tuple(parts))
        object.__setattr__(self, "params", tuple(names))
        object.__setattr__(self, "format", _plain_format(self.parts, self.format_general))

    def format_general(self, params: Mapping[str, Any]) -> str:
        """The codec's general path: every value through its converter, with
        the converter's errors. ``format`` spells exactly this
        (tests/storage/test_keys_plain.py holds the two side by side)."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            try:
                value = params[part.name]
            except KeyError:
                raise AccessPatternError(
                    f"Template {self.source!r} needs parameter {part.name!r}"
                ) from None
            out.append(_CONVERTERS[part.converter](value))
        return "".join(out)

    def span(self, name: str) -> slice:
        """Where field ``name``'s encoded value sits in every key ``format``
        spells, for a fixed-width field after only literals and fixed-width
        fields: a caller reads a time back from its key instead of spelling
        it twice (a scan stores its time in the key and beside it)."""
        start = 0
        for part in self.parts:
            if isinstance(part, str):
                start += len(part)
                continue
            width = _FIXED_WIDTHS.get(part.converter)
            if width is None:
                break
            if part.name == name:
                return slice(start, start + width)
            start += width
        raise AccessPatternError(
            f"Template {self.source!r}: {name!r} is not a fixed-width field at a fixed place"
        )

    def parse(self, key: str) -> dict[str, Any]:
        """Inverse of ``format``; fields end at the next literal part."""
        values: dict[str, Any] = {}
        rest = key
        for index, part in enumerate(self.parts):
            if isinstance(part, str):
                if not rest.startswith(part):
                    raise ValueError(f"{key!r} does not match template {self.source!r}")
                rest = rest[len(part) :]
                continue
            following = self.parts[index + 1] if index + 1 < len(self.parts) else None
            if following is None:
                raw, rest = rest, ""
            else:
                assert isinstance(following, str)
                cut = rest.find(following)
                if cut < 0:
                    raise ValueError(f"{key!r} does not match template {self.source!r}")
                raw, rest = rest[:cut], rest[cut:]
            if not raw:
                raise ValueError(f"{key!r} does not match template {self.source!r}")
            values[part.name] = _DECODERS[part.converter](raw)
        if rest:
            raise ValueError(f"{key!r} does not match template {self.source!r}")
        return values
