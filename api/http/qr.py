"""``GET /qr/{code}.png`` and ``.svg``: the label's QR code, encoding the
product's GS1 Digital Link URI when it has a GTIN and a serial, its public
verify URL otherwise (docs/design.md, "Labels").

Public like ``verifyProduct``: the code is printed on the product. An unknown
code is 404 and reads at most AP05; a known one reads AP05 and AP04. The
image depends only on what registration fixed and ``PROOFGATE_PUBLIC_URL``, so
it is served as immutable for a year.
"""

from __future__ import annotations

import io

import segno
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from api.http.public_product import PublicRefusal, public_product
from domain.labels import QrFormat, label_url

__all__ = ["IMMUTABLE", "PNG_BORDER", "PNG_TARGET_PIXELS", "qr_image", "render_qr"]

PNG_TARGET_PIXELS = 400
"""Printed labels are made from a 400 px image; the module size is the
largest whole number of pixels that fits, so edges stay sharp."""
PNG_BORDER = 2
"""Quiet zone in modules; narrower than the standard 4 to fit small labels,
as the labels printed so far were."""
IMMUTABLE = "public, max-age=31536000, immutable"
_MEDIA_TYPES = {QrFormat.PNG: "image/png", QrFormat.SVG: "image/svg+xml"}


def render_qr(url: str, qr_format: QrFormat) -> bytes:
    code = segno.make(url, error="m", micro=False)
    width, _ = code.symbol_size(scale=1, border=PNG_BORDER)
    scale = max(1, PNG_TARGET_PIXELS // width)
    out = io.BytesIO()
    if qr_format is QrFormat.PNG:
        code.save(out, kind="png", scale=scale, border=PNG_BORDER)
    else:
        code.save(out, kind="svg", scale=scale, border=PNG_BORDER, xmldecl=False)
    return out.getvalue()


async def qr_image(request: Request) -> Response:
    try:
        qr_format = QrFormat(request.path_params["format"])
    except ValueError:
        return PlainTextResponse("Not Found: ask for .png or .svg", status_code=404)
    try:
        services, _, product = await public_product(request)
    except PublicRefusal as refusal:
        return refusal.response
    if product is None:
        return PlainTextResponse("Not Found: no product has this code", status_code=404)
    body = render_qr(label_url(services.public_url, product), qr_format)
    return Response(body, media_type=_MEDIA_TYPES[qr_format], headers={"Cache-Control": IMMUTABLE})
