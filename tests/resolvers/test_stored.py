"""Types built from stored items read their declared attributes
(docs/design.md, Projected pages)."""

from __future__ import annotations

from domain.enums import ProductStatus
from resolvers.brands.types import Brand
from resolvers.products.types import Certificate, Product
from resolvers.stored import stored_values

ITEM = {
    "id": "p1",
    "brandId": "b1",
    "name": "Kettle",
    "status": "RECALLED",
    "certificateHash": "h",
    "signature": "s",
    "keyId": "k",
    "algorithm": "Ed25519",
    "chainHead": "c",
}


def test_missing_optional_attributes_read_as_before() -> None:
    """A missing sku is None, a missing metadata the empty object, and the
    status the enum member its stored value names."""
    product = Product.from_item(ITEM)
    assert (product.sku, product.category, product.description) == (None, None, None)
    assert product.metadata == {}
    assert product.status is ProductStatus.RECALLED
    assert Product.from_item({**ITEM, "metadata": {"n": 1}}).metadata == {"n": 1}


def test_every_stored_field_is_read() -> None:
    certificate = Certificate.from_item(ITEM)
    assert (certificate.hash, certificate.key_id, certificate.chain_head) == ("h", "k", "c")
    brand = {
        "id": "b1",
        "name": "Acme",
        "domain": "acme.example",
        "createdAt": "2026-01-01T00:00:00Z",
    }
    assert stored_values(Brand, brand)["industry"] is None
    assert Brand.from_item(brand).created_at.year == 2026
