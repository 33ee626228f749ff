"""GS1 identifiers and Digital Link URIs (docs/design.md, GS1 Digital Link).

A GTIN is 8, 12, 13 or 14 digits whose last is the GS1 mod-10 check digit;
it is kept as the 14 digits (zero-padded) that GS1 Digital Link's canonical
form uses. A serial (AI 21) and a lot (AI 10) are 1 to 20 characters of GS1's
character set 82. A Digital Link path of a serialised trade item is
``/01/{gtin}[/22/{cpv}][/10/{lot}]/21/{serial}``, qualifiers in that order;
this resolver knows the lot and the serial.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from urllib.parse import quote, unquote

__all__ = [
    "GTIN_LENGTHS",
    "QUALIFIER_MAX_CHARS",
    "DigitalLink",
    "DigitalLinkError",
    "check_digit",
    "digital_link_path",
    "normalise_gtin",
    "parse_digital_link",
    "validate_qualifier",
]

GTIN_LENGTHS = (8, 12, 13, 14)
QUALIFIER_MAX_CHARS = 20
"""AI 10 (lot) and AI 21 (serial): X..20 in the GS1 General Specifications."""
_CSET_82 = frozenset(string.ascii_letters + string.digits + "!\"%&'()*+,-./:;<=>?_")
_QUALIFIERS = {"22": "consumer product variant", "10": "batch or lot", "21": "serial number"}
_ORDER = ("22", "10", "21")
_AI_NAMES = {"10": "lot", "21": "serial"}


class DigitalLinkError(ValueError):
    """Why a GTIN, a qualifier or a Digital Link path is not valid: a sentence
    a person can act on."""


def check_digit(body: str) -> int:
    """GS1 mod-10: weights 3, 1, 3, ... from the rightmost digit of the body."""
    total = sum(
        int(digit) * (3 if index % 2 == 0 else 1) for index, digit in enumerate(reversed(body))
    )
    return (10 - total % 10) % 10


def normalise_gtin(text: str) -> str:
    """The GTIN-14 that ``text`` spells; raises ``DigitalLinkError``."""
    if not (text.isascii() and text.isdigit()) or len(text) not in GTIN_LENGTHS:
        raise DigitalLinkError(
            f"a GTIN is 8, 12, 13 or 14 digits, got {text[:32]!r}",
        )
    expected = check_digit(text[:-1])
    if int(text[-1]) != expected:
        raise DigitalLinkError(
            f"GTIN {text} has check digit {text[-1]}, but its digits give {expected}"
        )
    return text.zfill(14)


def validate_qualifier(value: str, ai: str) -> str:
    """A lot (AI 10) or serial (AI 21) as given; raises ``DigitalLinkError``."""
    name = _AI_NAMES.get(ai, f"AI {ai}")
    if not 1 <= len(value) <= QUALIFIER_MAX_CHARS:
        raise DigitalLinkError(
            f"a {name} (AI {ai}) is 1 to {QUALIFIER_MAX_CHARS} characters, got {len(value)}"
        )
    wrong = sorted({c for c in value if c not in _CSET_82})
    if wrong:
        raise DigitalLinkError(
            f"a {name} (AI {ai}) holds letters, digits and !\"%&'()*+,-./:;<=>?_ only "
            f"(GS1 character set 82), not {''.join(wrong)[:10]!r}"
        )
    return value


@dataclass(frozen=True)
class DigitalLink:
    gtin: str
    """GTIN-14."""
    serial: str | None = None
    lot: str | None = None


def digital_link_path(gtin: str, serial: str, lot: str | None = None) -> str:
    """The canonical path: every character outside RFC 3986's unreserved set
    percent-encoded, so a ``/`` or ``%`` of a serial stays inside its segment."""
    lot_part = f"/10/{quote(lot, safe='')}" if lot is not None else ""
    return f"/01/{gtin}{lot_part}/21/{quote(serial, safe='')}"


def _pairs(raw_path: str) -> list[tuple[str, str]]:
    segments = raw_path.strip("/").split("/") if raw_path.strip("/") else []
    if len(segments) % 2:
        raise DigitalLinkError(
            f"AI {segments[-1][:8]!r} has no value: a Digital Link path is /AI/value pairs"
        )
    return [(segments[i], unquote(segments[i + 1])) for i in range(0, len(segments), 2)]


def parse_digital_link(raw_path: str) -> DigitalLink:
    """``raw_path`` as sent (still percent-encoded, so an encoded ``/``
    stays in its value), e.g. ``/01/09506000134352/10/ABC/21/12345``."""
    pairs = _pairs(raw_path)
    if not pairs or pairs[0][0] != "01":
        raise DigitalLinkError("a Digital Link path of a trade item starts with /01/{gtin}")
    values: dict[str, str] = {}
    for ai, value in pairs[1:]:
        if ai not in _QUALIFIERS:
            raise DigitalLinkError(
                f"AI {ai[:8]!r} is not a key qualifier of a GTIN (AI 01): "
                "use 22, 10 and 21, in that order, or send other data as query parameters"
            )
        if ai in values:
            raise DigitalLinkError(f"AI {ai} appears twice")
        later = [a for a in values if _ORDER.index(a) > _ORDER.index(ai)]
        if later:
            raise DigitalLinkError(
                f"AI {ai} ({_QUALIFIERS[ai]}) must come before AI {later[0]} "
                f"({_QUALIFIERS[later[0]]}): the order is 22, 10, 21"
            )
        values[ai] = value
    if "22" in values:
        raise DigitalLinkError("AI 22 (consumer product variant) is not resolved here")
    return DigitalLink(
        gtin=normalise_gtin(pairs[0][1]),
        serial=validate_qualifier(values["21"], "21") if "21" in values else None,
        lot=validate_qualifier(values["10"], "10") if "10" in values else None,
    )
