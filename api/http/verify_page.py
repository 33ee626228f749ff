"""``/verify/{code}``: the page a consumer's phone opens from the label's QR
code (docs/design.md, Verification page).

GET renders the read-only verification (the checks of ``verification``,
recording nothing), so a link preview, a crawler or a prefetch records no
scan and feeds no threat rule. The scan is recorded by a POST from the page
itself: its script posts once the page is shown to a person, and without
scripts its "Record this check" button does; the POST is ``verifyProduct``'s
command. A POST must carry the page's token (``domain.check_tokens``) and,
when the browser says where it comes from (``Origin``, ``Sec-Fetch-Site``),
come from this gateway. GET and POST each take a token from the anonymous
rate-limit bucket of the caller's address, the one ``verifyProduct`` takes from.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from api.http.authentication import client_address
from api.http.languages import negotiate_language
from api.http.public_product import PublicRefusal, take_public_token
from api.http.verify_html import PageView, render_notice, render_page
from api.http.verify_text import LANGUAGES
from api.observability.observation import new_request_id
from domain.check_tokens import check_token_key, mint_check_token, valid_check_token
from domain.identifiers import parse_verification_code
from domain.verification import WARNINGS
from resolvers.context import RequestContext
from resolvers.loaders import Loaders
from services.auth import ANONYMOUS
from services.context import Services
from services.verification.checks import Checks, run_checks
from services.verification.commands import verify_product
from services.verification.drafts import ScanDraft
from storage.access_patterns import BRAND_BY_ID

__all__ = ["FORM_MAX_BYTES", "ROBOTS_TXT", "verify_routes"]

logger = logging.getLogger(__name__)

FORM_MAX_BYTES = 1024
"""The record form holds one token; a body past this is not the page's."""
ROBOTS_TXT = "User-agent: *\nDisallow: /verify/\nDisallow: /01/\n"
_USER_AGENT_MAX = 512


class _Refused(Exception):
    def __init__(self, kind: str, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(kind)
        self.kind, self.status, self.headers = kind, status, headers or {}


def _headers(lang: str, nonce: str) -> dict[str, str]:
    return {
        "Cache-Control": "no-store",
        "Content-Language": lang,
        "Vary": "Accept-Language",
        "X-Robots-Tag": "noindex, nofollow",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Content-Security-Policy": (
            f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; "
            "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        ),
    }


def _context(request: Request, services: Services) -> RequestContext:
    return RequestContext(
        services=services,
        principal=ANONYMOUS,
        loaders=Loaders(services.storage, ANONYMOUS.tenant),
        request_id=new_request_id(),
        request=request,
    )


async def _rate(request: Request) -> None:
    try:
        await take_public_token(request)
    except PublicRefusal as refusal:
        wait = refusal.response.headers.get("Retry-After")
        raise _Refused("limited", 429, {"Retry-After": wait} if wait else None) from None


def _same_origin(request: Request, services: Services) -> bool:
    """A browser names the page that sent a POST; ours is the public URL's
    origin or the one the request was addressed to. Clients that say
    nothing (no browser) are held to the token alone."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True
    public = urlsplit(services.public_url)
    own = {f"{public.scheme}://{public.netloc}", f"{request.url.scheme}://{request.url.netloc}"}
    return origin in own


async def _form_token(request: Request) -> str:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_MAX_BYTES:
            return ""
    fields = parse_qs(body.decode("ascii", "replace"), max_num_fields=4)
    return fields.get("token", [""])[0]


async def _view(
    context: RequestContext, code: str, checks: Checks, token: str, recorded: int | None
) -> PageView:
    product = checks.product
    assert product is not None
    brand = await context.loaders.item(BRAND_BY_ID, brand_id=product["brandId"])
    warnings = checks.outcome.warnings
    return PageView(
        code=code,
        result=checks.outcome.result.value,
        hash_valid=WARNINGS["hash"] not in warnings,
        signature_valid=checks.signature_valid,
        chain_intact=checks.chain_intact,
        claimed=checks.claim is not None,
        warnings=warnings,
        product=product,
        brand_name=None if brand is None else brand.get("name"),
        events=checks.chain,
        token=token,
        recorded=recorded,
    )


async def _show(request: Request, code: str) -> PageView:
    services: Services = request.app.state.graphql.services
    await _rate(request)
    context = _context(request, services)
    checks = await run_checks(context, code, None)
    if checks.product is None:
        raise _Refused("not_found", 404)
    key = check_token_key(services.hash_salt)
    token = mint_check_token(key, code, client_address(request), time.time())
    return await _view(context, code, checks, token, None)


async def _record(request: Request, code: str) -> PageView:
    services: Services = request.app.state.graphql.services
    if not _same_origin(request, services):
        raise _Refused("expired", 403)
    token = await _form_token(request)
    client = client_address(request)
    key = check_token_key(services.hash_salt)
    if not valid_check_token(key, token, code, client, time.time()):
        raise _Refused("expired", 403)
    await _rate(request)
    context = _context(request, services)
    agent = "".join(c for c in request.headers.get("user-agent", "") if c.isprintable())
    scan = ScanDraft(user_agent=agent[:_USER_AGENT_MAX] or None)
    verified = await verify_product(context, code, scan, client)
    if verified.checks.product is None:
        raise _Refused("not_found", 404)
    return await _view(context, code, verified.checks, "", verified.scan_count)


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


async def verification_page(request: Request) -> Response:
    lang = negotiate_language(request.headers.get("accept-language"), LANGUAGES)
    nonce = secrets.token_urlsafe(16)
    headers = _headers(lang, nonce)
    code = parse_verification_code(request.path_params["code"])
    try:
        if code is None:
            raise _Refused("malformed", 400)
        if request.method == "POST":
            view = await _record(request, code)
            if _wants_json(request):
                body: dict[str, Any] = {"recorded": True, "result": view.result}
                return JSONResponse({**body, "scanCount": view.recorded}, headers=headers)
        else:
            view = await _show(request, code)
        return HTMLResponse(render_page(view, lang, nonce), headers=headers)
    except _Refused as refused:
        page = render_notice(refused.kind, lang, nonce, code)
        return HTMLResponse(page, refused.status, headers={**headers, **refused.headers})
    except Exception:
        # A bug or an outage: the page says so, the traceback goes to the log.
        logger.exception("verification page: unhandled error")
        return HTMLResponse(render_notice("error", lang, nonce, code), 500, headers=headers)


async def robots_txt(request: Request) -> Response:
    """Crawlers that ask are told to keep off the pages of labels."""
    return PlainTextResponse(ROBOTS_TXT)


def verify_routes() -> list[BaseRoute]:
    return [
        Route("/verify/{code}", verification_page, methods=["GET", "POST"]),
        Route("/robots.txt", robots_txt, methods=["GET"]),
    ]
