"""``GET /dpp/{code}.json``: the product passport as a download
(docs/design.md, "Product passport"); the same document as ``Product.passport``.

Public by code like the QR image, since the code is printed on the product;
unknown code 404. Not cacheable: status and supply chain change. Like every
route that builds a body from stored data it takes a token from the caller's
rate limit and keeps to the response byte budget (``api/http/public_product.py``);
a HEAD answers the headers without building the document.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from api.http.public_product import PublicRefusal, budgeted_json, public_product
from services.passport import passport_for

__all__ = ["PASSPORT_MEDIA_TYPE", "passport_download"]

PASSPORT_MEDIA_TYPE = "application/ld+json"


async def passport_download(request: Request) -> Response:
    try:
        services, reads, product = await public_product(request)
        if product is None:
            return PlainTextResponse("Not Found: no product has this code", status_code=404)
        filename = f"passport-{product['verificationCode']}.json"
        headers = {
            "Content-Disposition": f'attachment; filename="{filename}"',
            "Cache-Control": "no-store",
        }
        if request.method == "HEAD":
            head = Response(media_type=PASSPORT_MEDIA_TYPE, headers=headers)
            del head.headers["content-length"]  # unknown until the document is built
            return head
        document = await passport_for(reads, services, product, public=True)
        body = budgeted_json(request, document)
    except PublicRefusal as refusal:
        return refusal.response
    return Response(body, media_type=PASSPORT_MEDIA_TYPE, headers=headers)
