"""The public URLs printed on a product's label: where a consumer verifies it,
and where the QR image of that URL is served (docs/design.md, "Labels").

Built from what registration fixed (the canonical code; the GTIN, serial and
lot), so one product has exactly one label URL and its QR image never
changes: the image can be cached forever. A product with a GTIN and a serial
carries its GS1 Digital Link URI, which this gateway resolves to the same
verification (docs/design.md, GS1 Digital Link).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from .gs1 import digital_link_path

__all__ = ["QrFormat", "label_url", "qr_url", "verify_url"]


class QrFormat(StrEnum):
    PNG = "png"
    SVG = "svg"


def _base(public_url: str) -> str:
    return public_url.rstrip("/")


def verify_url(public_url: str, code: str) -> str:
    return f"{_base(public_url)}/verify/{code}"


def qr_url(public_url: str, code: str, qr_format: QrFormat = QrFormat.PNG) -> str:
    return f"{_base(public_url)}/qr/{code}.{qr_format.value}"


def label_url(public_url: str, product: Mapping[str, Any]) -> str:
    """What the label's QR code encodes: the Digital Link URI when the
    product has a GTIN and a serial, else the verify URL."""
    gtin, serial = product.get("gtin"), product.get("serial")
    if isinstance(gtin, str) and isinstance(serial, str):
        return _base(public_url) + digital_link_path(gtin, serial, product.get("lot"))
    return verify_url(public_url, product["verificationCode"])
