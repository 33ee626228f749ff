"""Random DynamoDB wire values of all ten types, built from one seed.

Hypothesis draws the seed; building thousands of items from its draws one
character at a time took a quarter of a millisecond per number, so the
differential test's bulk comes from here, and its shrinkable part from
Hypothesis strategies (``tests/storage/dynamodb/test_dynamodb_wire_differential.py``).
"""

from __future__ import annotations

import base64
import random
from typing import Any

__all__ = ["WireValues"]

_ALPHABETS = (
    (0x20, 0x7E),  # printable ASCII, quotes and backslash among them
    (0x00, 0x1F),  # control characters, escaped in JSON
    (0xA0, 0x24F),  # Latin-1 and Latin Extended
    (0x4E00, 0x4FFF),  # CJK
    (0x2028, 0x2029),  # line and paragraph separators
    (0xFEFF, 0xFEFF),  # byte order mark
    (0x1F600, 0x1F64F),  # outside the BMP: a surrogate pair when escaped
)
_ZEROS = ("0", "-0", "0.0", "-0.000", "0E+5", "0e-3")
_EDGE_NUMBERS = ("9" * 38, "-" + "9" * 38, "1E+125", "1E-130", "-1.5E-130", "1" + "0" * 37)


class WireValues:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def text(self, most: int = 16, least: int = 0) -> str:
        rng = self._rng
        characters = []
        for _ in range(rng.randint(least, most)):
            low, high = rng.choice(_ALPHABETS)
            characters.append(chr(rng.randint(low, high)))
        return "".join(characters)

    def number(self) -> str:
        rng = self._rng
        roll = rng.random()
        if roll < 0.08:
            return rng.choice(_ZEROS)
        if roll < 0.16:
            return rng.choice(_EDGE_NUMBERS)
        digits = str(rng.randint(1, 10**38 - 1))[: rng.choice((1, 3, 12, 38))]
        sign = rng.choice(("", "-"))
        form = rng.randrange(3)
        if form == 0:
            return sign + digits
        if form == 1:
            cut = rng.randint(1, len(digits))
            return f"{sign}{digits[:cut]}.{digits[cut:] or '0'}"
        exponent = rng.randint(-129, 125 - len(digits))
        mark = rng.choice("Ee")
        return f"{sign}{digits[0]}.{digits[1:] or '0'}{mark}{exponent:+d}"

    def binary(self, most: int = 24) -> str:
        return base64.b64encode(self._rng.randbytes(self._rng.randint(0, most))).decode()

    def value(self, depth: int = 3) -> dict[str, Any]:
        rng = self._rng
        kinds = ["S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS"]
        if depth:
            kinds += ["M", "L", "M", "L"]
        kind = rng.choice(kinds)
        size = rng.randint(0, 4)
        if kind == "S":
            return {"S": self.text()}
        if kind == "N":
            return {"N": self.number()}
        if kind == "B":
            return {"B": self.binary()}
        if kind == "BOOL":
            return {"BOOL": rng.random() < 0.5}
        if kind == "NULL":
            return {"NULL": True}
        if kind == "SS":
            return {"SS": sorted({self.text(8) for _ in range(size + 1)})}
        if kind == "NS":
            return {"NS": sorted({self.number() for _ in range(size + 1)})}
        if kind == "BS":
            return {"BS": sorted({self.binary(8) for _ in range(size + 1)})}
        if kind == "M":
            return {"M": {self.text(10, 1): self.value(depth - 1) for _ in range(size)}}
        return {"L": [self.value(depth - 1) for _ in range(size)]}

    def item(self) -> dict[str, Any]:
        attributes = {self.text(12, 1): self.value() for _ in range(self._rng.randint(0, 7))}
        attributes.pop("PK", None)  # the key's own names: a table's key is a string
        attributes.pop("SK", None)
        return {"PK": {"S": self.text(20)}, "SK": {"S": self.text(20)}, **attributes}
