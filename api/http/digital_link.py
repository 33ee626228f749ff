"""GS1 Digital Link resolution, as the GS1-Conformant Resolver standard
(1.2.0) describes it (docs/design.md, GS1 Digital Link).

``/01/{gtin}[/10/{lot}]/21/{serial}`` names one unit; it is found by one
key-only read (AP34). A browser (or any client not asking for a linkset) is
sent on with 307 to the unit's verification page, its default link; a
client that accepts ``application/linkset+json``, or sends
``?linkType=all`` (``linkset``), gets the RFC 9264 linkset of the unit's
links; ``?linkType=gs1:<type>`` is sent to that link (the default one when
the unit has none). A malformed path is 400 with the reason; an unknown
unit 404. ``/.well-known/gs1resolver`` describes the resolver. Like the other
public routes, a resolution takes a token from the caller's anonymous
rate-limit bucket.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from api.http.public_product import PublicRefusal, take_public_token
from api.http.verify_text import LANGUAGES
from domain.gs1 import DigitalLinkError, digital_link_path, parse_digital_link
from services.context import Services
from services.products.digital_link import resolve_digital_link
from services.reads import StorageReads

__all__ = ["GS1_VOCABULARY", "LINKSET_MEDIA_TYPE", "digital_link_routes", "linkset"]

LINKSET_MEDIA_TYPE = "application/linkset+json"
GS1_VOCABULARY = "https://gs1.org/voc/"
LINKSET_CONTEXT = "https://ref.gs1.org/standards/resolver/linkset-context"
_LINKSET_TYPES = frozenset({"all", "linkset"})
_CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Expose-Headers": "Link, Location",
}
_ALLOW = "GET, HEAD, OPTIONS"


def _links(base: str, code: str) -> dict[str, dict[str, Any]]:
    """The unit's links by GS1 link type (without the vocabulary's prefix)."""
    page = {"href": f"{base}/verify/{code}", "type": "text/html", "hreflang": list(LANGUAGES)}
    return {
        "defaultLink": {**page, "title": "Verify this product"},
        "pip": {**page, "title": "Product information and verification"},
        "verificationService": {**page, "title": "Verify this product's authenticity"},
        "certificationInfo": {
            "href": f"{base}/dpp/{code}.json",
            "type": "application/ld+json",
            "title": "Digital product passport, with the signed certificate",
        },
    }


def linkset(base: str, unit: Mapping[str, Any]) -> dict[str, Any]:
    """RFC 9264's JSON form: one context object, anchored at the unit's
    canonical Digital Link URI, its relations the vocabulary's full URIs."""
    anchor = base + digital_link_path(unit["gtin"], unit["serial"], unit.get("lot"))
    context: dict[str, Any] = {"anchor": anchor, "itemDescription": unit.get("name", "")}
    for link_type, target in _links(base, unit["verificationCode"]).items():
        context[GS1_VOCABULARY + link_type] = [target]
    return {"linkset": [context]}


def _link_type(requested: str) -> str:
    """``gs1:pip`` or ``https://gs1.org/voc/pip`` -> ``pip``."""
    for prefix in ("gs1:", GS1_VOCABULARY, "http://gs1.org/voc/"):
        if requested.startswith(prefix):
            return requested[len(prefix) :]
    return requested


def _raw_path(request: Request) -> str:
    """The path as sent, so an encoded ``/`` stays inside its value."""
    raw: bytes = request.scope.get("raw_path") or request.scope["path"].encode()
    path = raw.decode("ascii", "replace")
    root = request.scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def _wants_linkset(request: Request, link_type: str | None) -> bool:
    if link_type is not None:
        return link_type in _LINKSET_TYPES
    return LINKSET_MEDIA_TYPE in request.headers.get("accept", "")


async def resolve(request: Request) -> Response:
    if request.method == "OPTIONS":
        return Response(status_code=204, headers={**_CORS, "Allow": _ALLOW})
    try:
        link = parse_digital_link(_raw_path(request))
    except DigitalLinkError as error:
        return PlainTextResponse(f"Bad Request: {error}", 400, headers=_CORS)
    try:
        await take_public_token(request)
    except PublicRefusal as refusal:
        refusal.response.headers.update(_CORS)
        return refusal.response
    services: Services = request.app.state.graphql.services
    unit = await resolve_digital_link(StorageReads(services.storage, tenant="public"), link)
    if unit is None:
        return PlainTextResponse(
            "Not Found: no unit of this GTIN has this serial (and lot)", 404, headers=_CORS
        )
    base = services.public_url.rstrip("/")
    body = linkset(base, unit)
    anchor = body["linkset"][0]["anchor"]
    headers = {
        **_CORS,
        "Vary": "Accept",
        "Link": f'<{anchor}?linkType=linkset>; rel="linkset"; type="{LINKSET_MEDIA_TYPE}"',
    }
    requested = request.query_params.get("linkType")
    if _wants_linkset(request, requested):
        headers["Link"] = (
            f'<{LINKSET_CONTEXT}>; rel="http://www.w3.org/ns/json-ld#context"; '
            'type="application/ld+json"'
        )
        return JSONResponse(body, media_type=LINKSET_MEDIA_TYPE, headers=headers)
    links = _links(base, unit["verificationCode"])
    target = links.get(_link_type(requested or ""), links["defaultLink"])
    return RedirectResponse(target["href"], status_code=307, headers=headers)


async def resolver_description(request: Request) -> Response:
    """``/.well-known/gs1resolver``: what this resolver resolves."""
    services: Services = request.app.state.graphql.services
    description = {
        "name": "proofgate",
        "resolverRoot": services.public_url.rstrip("/"),
        "supportedPrimaryKeys": ["01"],
        "supportedLinkType": [{"namespace": GS1_VOCABULARY, "prefix": "gs1:"}],
        "linkTypeDefaultCanBeLinkset": False,
    }
    return JSONResponse(description, headers={**_CORS, "Cache-Control": "public, max-age=3600"})


def digital_link_routes() -> list[BaseRoute]:
    return [
        Route("/01/{rest:path}", resolve, methods=["GET", "HEAD", "OPTIONS"]),
        Route("/.well-known/gs1resolver", resolver_description, methods=["GET", "HEAD"]),
    ]
