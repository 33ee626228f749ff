"""A product as registration will store and certify it: validated input."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from domain.canonical import JSONObject
from domain.errors import BadUserInput
from domain.gs1 import DigitalLinkError, normalise_gtin, validate_qualifier
from domain.validation import (
    CATEGORY,
    DESCRIPTION,
    PRODUCT_NAME,
    SKU,
    validate_id,
    validate_metadata,
)

from .items import product_name_digest

__all__ = ["ProductDraft", "ProductFields"]


class ProductFields(Protocol):
    """The fields of a product as a client sends them (``RegisterProductInput``)."""

    @property
    def brand_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def sku(self) -> str | None: ...
    @property
    def category(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...
    @property
    def metadata(self) -> object | None: ...
    @property
    def gtin(self) -> str | None: ...
    @property
    def serial(self) -> str | None: ...
    @property
    def lot(self) -> str | None: ...


@dataclass(frozen=True)
class ProductDraft:
    """A product as it will be stored and certified: validated, nothing altered."""

    brand_id: str
    name: str
    sku: str | None
    category: str | None
    description: str | None
    metadata: JSONObject
    gtin: str | None = None
    """GTIN-14, whatever length it was sent in (docs/design.md, GS1 Digital Link)."""
    serial: str | None = None
    lot: str | None = None

    @classmethod
    def validate(cls, data: ProductFields, *, field: str) -> ProductDraft:
        gtin, serial, lot = _gs1(data, field)
        return cls(
            brand_id=validate_id(data.brand_id, field=f"{field}.brandId"),
            name=PRODUCT_NAME(data.name, field=f"{field}.name"),
            sku=SKU.optional(data.sku, field=f"{field}.sku"),
            category=CATEGORY.optional(data.category, field=f"{field}.category"),
            description=DESCRIPTION.optional(data.description, field=f"{field}.description"),
            metadata=validate_metadata(data.metadata, field=f"{field}.metadata"),
            gtin=gtin,
            serial=serial,
            lot=lot,
        )

    @property
    def gs1(self) -> dict[str, str]:
        """The GS1 attributes the product item stores (those it has)."""
        values = {"gtin": self.gtin, "serial": self.serial, "lot": self.lot}
        return {name: value for name, value in values.items() if value is not None}

    @property
    def name_digest(self) -> str:
        return product_name_digest(self.name, self.sku)


def _gs1(data: ProductFields, field: str) -> tuple[str | None, str | None, str | None]:
    """A serial or a lot qualifies a GTIN, so neither comes without one."""
    gtin, serial, lot = data.gtin, data.serial, data.lot
    if gtin is None and (serial is not None or lot is not None):
        name = "serial" if serial is not None else "lot"
        raise BadUserInput(
            f"{field}.{name}: a {name} qualifies a GTIN; send gtin too",
            hint="Send the product's GTIN (8, 12, 13 or 14 digits) with its serial and lot.",
        )
    return (
        _checked(gtin, f"{field}.gtin", normalise_gtin),
        _checked(serial, f"{field}.serial", lambda v: validate_qualifier(v, "21")),
        _checked(lot, f"{field}.lot", lambda v: validate_qualifier(v, "10")),
    )


def _checked(value: str | None, field: str, check: Callable[[str], str]) -> str | None:
    if value is None:
        return None
    try:
        return check(value)
    except DigitalLinkError as error:
        raise BadUserInput(f"{field}: {error}", hint=_GS1_HINT) from None


_GS1_HINT = (
    "A GTIN ends in its GS1 check digit; a serial and a lot are 1 to 20 letters, digits "
    "or !\"%&'()*+,-./:;<=>?_ characters."
)
