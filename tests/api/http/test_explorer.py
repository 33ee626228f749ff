"""The explorer page and its vendored assets, over HTTP (no browser: see
test_explorer_browser.py for the page actually running)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from api.demo.loader import Demo, DemoBrand
from api.http.explorer import ASSETS, CONTENT_SECURITY_POLICY, STATIC_DIR

HTML = {"Accept": "text/html"}
ASSET_URL = re.compile(r'(?:src|href)="(/graphql/static/([^"?]+)\?v=([0-9a-f]+))"')
CONFIG = re.compile(r'<script id="explorer-config" type="application/json">(.*?)</script>', re.S)
INGESTED = {"input": {"eventId": "SPL-1", "productId": "01M8KRT9P85G7C3D2HC6VTRA7Z"}}
DEMO = Demo(
    brands=(
        DemoBrand(
            "aurora",
            "01M8KRT9P85G7C3D2HC6VTRA7Y",
            "Aurora",
            "PRO",
            "pg_demo-brand-key",
            "pgi_demo-ingest-key",
        ),
    ),
    verification_code="BFAF-853J-VPCV",
    ingested=INGESTED,
)


@pytest.fixture
def with_demo(sqlite_gateway: Any) -> Iterator[Any]:
    state = sqlite_gateway.app.state
    previous = getattr(state, "demo", None)
    state.demo = DEMO
    yield sqlite_gateway
    state.demo = previous


def page_config(page: str) -> dict[str, object]:
    match = CONFIG.search(page)
    assert match is not None
    config: dict[str, object] = json.loads(match.group(1))
    return config


async def test_a_browser_gets_the_explorer(sqlite_gateway: Any) -> None:
    response = await sqlite_gateway.http.get("/graphql", headers=HTML)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    assert response.headers["cache-control"] == "no-store"
    page = response.text
    assert "<title>proofgate explorer</title>" in page
    assert [m.group(2) for m in ASSET_URL.finditer(page)] == [
        "graphiql.min.css",
        "react.production.min.js",
        "react-dom.production.min.js",
        "graphiql.min.js",
        "explorer.js",
    ]
    # Everything comes from the gateway itself: no CDN, no inline script.
    assert "//" not in re.sub(r"<script id=\"explorer-config\".*?</script>", "", page, flags=re.S)
    assert re.findall(r"<script(?! id=\"explorer-config\")[^>]*>\s*[^<\s]", page) == []


async def test_the_example_tabs_carry_placeholders_without_the_demo(
    sqlite_gateway: Any,
) -> None:
    page = (await sqlite_gateway.http.get("/graphql", headers=HTML)).text
    config = page_config(page)
    tabs = config["tabs"]
    assert isinstance(tabs, list)
    headers = [tab["headers"] for tab in tabs if tab["headers"]]
    assert headers and all("<paste an" in h for h in headers)
    assert sum("<paste an API key>" in h for h in headers) == len(headers) - 1
    assert config["persistHeaders"] is False
    assert sqlite_gateway.admin_key not in page


async def test_under_demo_the_tabs_hold_the_demo_brand_key_never_the_admin_key(
    with_demo: Any,
) -> None:
    page = (await with_demo.http.get("/graphql", headers=HTML)).text
    config = page_config(page)
    tabs = config["tabs"]
    assert isinstance(tabs, list)
    authorizations = {json.loads(t["headers"])["Authorization"] for t in tabs if t["headers"]}
    assert authorizations == {"Bearer pg_demo-brand-key", "Bearer pgi_demo-ingest-key"}
    variables = [json.loads(t["variables"]) for t in tabs if t["variables"]]
    assert {"code": DEMO.verification_code} in variables
    assert {"brandId": DEMO.brand.id} in variables
    assert INGESTED in variables
    assert with_demo.admin_key not in page
    assert config["persistHeaders"] is True


async def test_json_in_the_page_cannot_close_its_script_element(with_demo: Any) -> None:
    hostile = Demo(
        brands=(DemoBrand("x", "01M8KRT9P85G7C3D2HC6VTRA7Y", "X", "PRO", "</script><b>"),),
        verification_code="<!--",
    )
    with_demo.app.state.demo = hostile
    page = (await with_demo.http.get("/graphql", headers=HTML)).text
    assert "</script><b>" not in page and "<!--" not in page
    tabs = page_config(page)["tabs"]
    assert isinstance(tabs, list)
    headers = [json.loads(tab["headers"]) for tab in tabs if tab["headers"]]
    assert headers[0] == {"Authorization": "Bearer </script><b>"}


async def test_assets_are_served_with_their_type_and_long_caching(
    sqlite_gateway: Any,
) -> None:
    page = (await sqlite_gateway.http.get("/graphql", headers=HTML)).text
    for match in ASSET_URL.finditer(page):
        url, name, version = match.groups()
        response = await sqlite_gateway.http.get(url, headers={"Accept-Encoding": "identity"})
        assert response.status_code == 200, name
        assert response.content == (STATIC_DIR / name).read_bytes()
        expected = "text/css" if name.endswith(".css") else "text/javascript"
        assert response.headers["content-type"].startswith(expected)
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert response.headers["etag"] == f'"{version}"'


async def test_an_asset_without_its_version_is_revalidated(sqlite_gateway: Any) -> None:
    client = sqlite_gateway.http
    response = await client.get("/graphql/static/explorer.js")
    assert response.headers["cache-control"] == "no-cache"
    etag = response.headers["etag"]
    again = await client.get("/graphql/static/explorer.js", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""


async def test_large_assets_are_gzipped_for_clients_that_accept_it(
    sqlite_gateway: Any,
) -> None:
    url = "/graphql/static/graphiql.min.js"
    response = await sqlite_gateway.http.get(url, headers={"Accept-Encoding": "gzip"})
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["vary"] == "Accept-Encoding"
    assert (
        int(response.headers["content-length"])
        < (STATIC_DIR / "graphiql.min.js").stat().st_size / 2
    )
    assert response.content == (STATIC_DIR / "graphiql.min.js").read_bytes()  # httpx decodes
    raw = await sqlite_gateway.http.get(url, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in raw.headers
    assert raw.content == response.content


@pytest.mark.parametrize("name", ["nope.js", "LICENSES.txt", "..%2Fapp.py", "%2E%2E"])
async def test_only_the_listed_assets_are_served(sqlite_gateway: Any, name: str) -> None:
    response = await sqlite_gateway.http.get(f"/graphql/static/{name}")
    assert response.status_code == 404


def test_the_vendored_assets_stay_small_licensed_and_offline() -> None:
    sizes = {name: (STATIC_DIR / name).stat().st_size for name in ASSETS}
    assert sum(sizes.values()) < 3 * 1024 * 1024, sizes
    licenses = (STATIC_DIR / "LICENSES.txt").read_text()
    assert licenses.count("MIT License") == 2
    assert "graphiql 3.8.3" in licenses and "react 18.3.1" in licenses
    for name in ASSETS:
        text = (STATIC_DIR / name).read_text(errors="replace")
        assert "unpkg.com" not in text and "cdn.jsdelivr" not in text, name
    css = (STATIC_DIR / "graphiql.min.css").read_text()
    assert re.findall(r"url\((?!data:)", css) == [], "fonts must be inlined"
