"""The explorer: GraphiQL on ``GET /graphql`` from a browser, fully offline.

Strawberry's own page loads GraphiQL from a CDN, which breaks on an offline
machine and makes every visit a third-party request. The assets are vendored
instead (``make explorer-assets`` rebuilds them from the npm registry; MIT,
see ``static/LICENSES.txt``) and served from ``/graphql/static/``. Their URLs
carry a content hash, so browsers may cache them for a year.

The page has no inline script (its settings travel as inert JSON), so the
Content-Security-Policy can forbid every script but our own files.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from api.http.explorer_examples import examples

if TYPE_CHECKING:
    from api.demo.loader import Demo

__all__ = ["ASSETS", "CONTENT_SECURITY_POLICY", "STATIC_DIR", "explorer_asset", "explorer_page"]

STATIC_DIR = Path(__file__).with_name("static")
ASSETS = (
    "react.production.min.js",
    "react-dom.production.min.js",
    "graphiql.min.js",
    "graphiql.min.css",
    "explorer.js",
)
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        # GraphiQL's editors set inline styles; its fonts are data: URIs.
        "style-src 'self' 'unsafe-inline'",
        "font-src 'self' data:",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
_IMMUTABLE = "public, max-age=31536000, immutable"
_MEDIA_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
_GZIP_MIN_BYTES = 1024

_PAGE = """\
<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>proofgate explorer</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="{graphiql_min_css}">
    <style>body {{ margin: 0; }} #graphiql {{ height: 100vh; }}</style>
  </head>
  <body>
    <div id="graphiql">Loading the explorer...</div>
    <script id="explorer-config" type="application/json">{config}</script>
    <script src="{react_production_min_js}"></script>
    <script src="{react_dom_production_min_js}"></script>
    <script src="{graphiql_min_js}"></script>
    <script src="{explorer_js}"></script>
  </body>
</html>
"""


@dataclass(frozen=True)
class _Asset:
    body: bytes
    media_type: str
    version: str
    """A prefix of the SHA-256 of the body: the ``v`` of its URL and its ETag."""

    @functools.cached_property
    def gzipped(self) -> bytes | None:
        if len(self.body) < _GZIP_MIN_BYTES:
            return None
        return gzip.compress(self.body, compresslevel=6, mtime=0)


@functools.cache
def _assets() -> dict[str, _Asset]:
    """Read on first use, not at import: the CLI and the tests import the app
    without serving a page."""
    assets = {}
    for name in ASSETS:
        body = (STATIC_DIR / name).read_bytes()
        media_type = _MEDIA_TYPES[Path(name).suffix]
        assets[name] = _Asset(body, media_type, hashlib.sha256(body).hexdigest()[:16])
    return assets


def _placeholder(name: str) -> str:
    return name.replace("-", "_").replace(".", "_")


def _script_json(value: object) -> str:
    """JSON that cannot close the script element that holds it."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@functools.lru_cache(maxsize=8)
def _render(root_path: str, demo: Demo | None) -> str:
    tabs = [example.as_tab() for example in examples(demo)]
    config = {
        "endpoint": f"{root_path}/graphql",
        "tabs": tabs,
        # Headers are kept in the browser only when they hold a demo key.
        "persistHeaders": demo is not None,
        "storageNamespace": "proofgate:"
        + hashlib.sha256(_script_json(tabs).encode()).hexdigest()[:12],
    }
    urls = {
        _placeholder(name): html.escape(f"{root_path}/graphql/static/{name}?v={asset.version}")
        for name, asset in _assets().items()
    }
    return _PAGE.format_map({**urls, "config": _script_json(config)})


def explorer_page(request: Request) -> HTMLResponse:
    demo: Demo | None = getattr(request.app.state, "demo", None)
    page = _render(request.scope.get("root_path", ""), demo)
    return HTMLResponse(
        page,
        headers={
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            # Under --demo the page holds a brand key: keep it out of caches.
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
        },
    )


async def explorer_asset(request: Request) -> Response:
    asset = _assets().get(request.path_params["name"])
    if asset is None:
        return PlainTextResponse("Not Found", status_code=404)
    etag = f'"{asset.version}"'
    versioned = request.query_params.get("v") == asset.version
    headers = {
        "ETag": etag,
        "Cache-Control": _IMMUTABLE if versioned else "no-cache",
        "Vary": "Accept-Encoding",
        "X-Content-Type-Options": "nosniff",
    }
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    body = asset.body
    if asset.gzipped is not None and "gzip" in request.headers.get("accept-encoding", ""):
        body = asset.gzipped
        headers["Content-Encoding"] = "gzip"
    return Response(body, media_type=asset.media_type, headers=headers)
