from __future__ import annotations

import pytest

from domain.gtin import gtin_from_sku


@pytest.mark.parametrize(
    ("sku", "gtin"),
    [
        ("4006381333931", "04006381333931"),  # EAN-13 printed on a Stabilo pen
        ("036000291452", "00036000291452"),  # UPC-A from the GS1 examples
        ("96385074", "00000096385074"),  # EAN-8
        ("10614141000415", "10614141000415"),  # GTIN-14 from the GS1 General Specifications
    ],
)
def test_valid_gtins_are_padded_to_14(sku: str, gtin: str) -> None:
    assert gtin_from_sku(sku) == gtin


FULLWIDTH_EAN = "".join(chr(0xFF10 + int(d)) for d in "4006381333931")


@pytest.mark.parametrize(
    "sku", [None, "", "4006381333932", "ACME-123", "40063813339", FULLWIDTH_EAN]
)
def test_anything_else_is_no_gtin(sku: str | None) -> None:
    assert gtin_from_sku(sku) is None
