"""Ids of what a brand owns, such as integrations and webhooks.

``<prefix><brand id>_<local id>``: the brand's id inside the id tells a read
which partition holds the item, and whose it is, without a lookup. Both
parts are ids (``domain.identifiers.is_id``), checked when one is parsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from domain.errors import BadUserInput
from domain.identifiers import is_id

__all__ = ["BrandScopedRef"]


@dataclass(frozen=True, slots=True)
class BrandScopedRef:
    """A subclass names its ``prefix``, the access pattern's key parameter of
    the local id (``param``) and the GraphQL type whose id it is."""

    prefix: ClassVar[str]
    param: ClassVar[str]
    type_name: ClassVar[str]

    brand_id: str
    local_id: str

    @property
    def id(self) -> str:
        return f"{self.prefix}{self.brand_id}_{self.local_id}"

    @property
    def params(self) -> dict[str, str]:
        return {"brand_id": self.brand_id, self.param: self.local_id}

    @classmethod
    def parse(cls, text: str) -> Self:
        brand_id, _, local_id = text.removeprefix(cls.prefix).partition("_")
        if not text.startswith(cls.prefix) or not (is_id(brand_id) and is_id(local_id)):
            article = "an" if cls.type_name[0] in "AEIOU" else "a"
            raise BadUserInput(
                f"Invalid {cls.type_name.lower()} id",
                hint=f"Use {article} {cls.type_name}.id returned by the API.",
            )
        return cls(brand_id, local_id)
