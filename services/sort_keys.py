"""Keys a scan spells on every verification, without the key codec's general
path where the values need none of its work (docs/design.md, "Storage").

A value with no ``#`` or ``%``, plain ASCII and short, is encoded verbatim by
the codec, and a datetime already in UTC is spelled exactly as
``format_datetime`` spells it; anything else goes through the codec itself,
so keys and errors stay the codec's (tests/services/test_sort_keys.py holds
the two side by side).
"""

from __future__ import annotations

from datetime import UTC, datetime

from domain.datetimes import format_datetime
from storage import AccessPattern, Key, KeyTemplate

__all__ = ["PLAIN_MAX_CHARS", "PlainKey", "TimedSort", "plain", "prefix_of"]

PLAIN_MAX_CHARS = 200
"""Far below what a key may hold in UTF-8 (``storage.limits``), so a key made
of a few plain values needs no length check of its own."""


def plain(value: object) -> bool:
    """Encoded verbatim by the codec's ``str`` converter."""
    return (
        type(value) is str
        and 0 < len(value) <= PLAIN_MAX_CHARS
        and value.isascii()
        and "#" not in value
        and "%" not in value
    )


def prefix_of(template: KeyTemplate, name: str) -> str:
    """The literal before ``{name}`` in a template that ends with that one
    field, so a plain value is spelled by appending it."""
    prefix, field, rest = template.source.partition(f"{{{name}}}")
    if not field or rest or "{" in prefix:
        raise ValueError(f"Template {template.source!r} does not end with its one field {name!r}")
    return prefix


class PlainKey:
    """The key of a get-type pattern ``<prefix>{<name>}`` / constant sort key
    (a product's META, a brand's STATS), spelled by appending a plain value;
    the pattern's own ``key`` spells the rest. A pattern of another shape is
    refused when the module that needs it is imported."""

    __slots__ = ("_ap", "_name", "_prefix", "_sort")

    def __init__(self, ap: AccessPattern, name: str) -> None:
        if ap.sort_key.template.params:
            raise ValueError(f"{ap.id}: the sort key {ap.sort_key.describe()} is not constant")
        self._ap = ap
        self._name = name
        self._prefix = prefix_of(ap.partition_key, name)
        self._sort = ap.sort_key.template.format({})

    def __call__(self, value: str) -> Key:
        if plain(value):
            return Key(self._prefix + value, self._sort)
        return self._ap.key(**{self._name: value})


class TimedSort:
    """The sort key ``<prefix>#{<time>:time}#{<ident>}``: items kept in time
    order, an id keeping two in one microsecond apart."""

    __slots__ = ("_ident", "_prefix", "_time", "template")

    def __init__(self, prefix: str, time: str, ident: str) -> None:
        self.template = KeyTemplate(f"{prefix}#{{{time}:time}}#{{{ident}}}")
        self._prefix = f"{prefix}#"
        self._time = time
        self._ident = ident

    def spell(self, moment: datetime, ident: str) -> tuple[str, str]:
        """The key and ``format_datetime(moment)``, which items store beside it."""
        if isinstance(moment, datetime) and moment.tzinfo is UTC and plain(ident):
            spelled = format_datetime(moment)
            return f"{self._prefix}{spelled}#{ident}", spelled
        key = self.template.format({self._time: moment, self._ident: ident})
        return key, format_datetime(moment)

    def format(self, moment: datetime, ident: str) -> str:
        return self.spell(moment, ident)[0]
