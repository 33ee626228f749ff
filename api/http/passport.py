"""``GET /dpp/{code}.json``: the product passport as a download
(docs/design.md, "Product passport"); the same document as ``Product.passport``.

Public by code like the QR image, since the code is printed on the product;
unknown code 404. Not cacheable: status and supply chain change.
"""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from api.http.public_product import product_at
from services.passport import passport_for

__all__ = ["PASSPORT_MEDIA_TYPE", "passport_download"]

PASSPORT_MEDIA_TYPE = "application/ld+json"


async def passport_download(request: Request) -> Response:
    services, reads, product = await product_at(request)
    if product is None:
        return PlainTextResponse("Not Found: no product has this code", status_code=404)
    document = await passport_for(reads, services, product, public=True)
    filename = f"passport-{product['verificationCode']}.json"
    return Response(
        json.dumps(document, ensure_ascii=False, indent=2).encode(),
        media_type=PASSPORT_MEDIA_TYPE,
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "Cache-Control": "no-store",
        },
    )
