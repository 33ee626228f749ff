"""The public URLs printed on a product's label: where a consumer verifies it,
and where the QR image of that URL is served (docs/design.md, "Labels").

Built from the canonical code only, so one product has exactly one verify URL
and its QR image never changes: the image can be cached forever.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["QrFormat", "qr_url", "verify_url"]


class QrFormat(StrEnum):
    PNG = "png"
    SVG = "svg"


def _base(public_url: str) -> str:
    return public_url.rstrip("/")


def verify_url(public_url: str, code: str) -> str:
    return f"{_base(public_url)}/verify/{code}"


def qr_url(public_url: str, code: str, qr_format: QrFormat = QrFormat.PNG) -> str:
    return f"{_base(public_url)}/qr/{code}.{qr_format.value}"
