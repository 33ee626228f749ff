"""GET and POST /verify/{code}: the consumer's page. A GET renders the
verdict and records nothing; a POST from the page records one scan, as
``verifyProduct`` does (counted here through ``verification.scanCount``)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from _asgi import codes
from _limits import serve

from api.settings.limits import Limits
from domain.check_tokens import check_token_key, mint_check_token

SCANS = "query($c: String!) { verification(code: $c) { scanCount result } }"
CLAIM = """mutation($c: String!) {
    claimProduct(code: $c, deviceFingerprint: "owner-phone") { claimedAt }
}"""
APPEND = """mutation($p: ID!) {
    addProvenanceEvent(productId: $p, input: {type: SHIPPED, actor: "DHL",
        location: "Hamburg <Hafen>"}) { sequence }
}"""
UNIT_GTIN = "09506000134352"
LINK_PREVIEWS = (
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
    "WhatsApp/2.23.20.0",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "python-httpx",
)


async def scan_count(gateway: Any, code: str) -> int:
    data = await gateway.data(SCANS, {"c": code})
    count: int = data["verification"]["scanCount"]
    return count


async def product(gateway: Any, **fields: Any) -> tuple[Any, dict[str, Any]]:
    brand = await gateway.register_brand(name="Maison <Verte> & Fils")
    registered = await gateway.register_product(brand, sku="MV-1", category="bags", **fields)
    await gateway.data(APPEND, {"p": registered["id"]}, key=brand.key)
    return brand, registered


def token_of(page: str) -> str:
    found = re.search(r'name="token" value="([^"]+)"', page)
    assert found is not None, page
    return found.group(1)


async def test_a_get_renders_the_verdict_and_records_nothing(gateway) -> None:
    _, registered = await product(gateway, name="Sac <b>Rive</b>")
    code = registered["verificationCode"]
    before = await scan_count(gateway, code)
    for agent in LINK_PREVIEWS:
        response = await gateway.http.get(f"/verify/{code}", headers={"User-Agent": agent})
        assert response.status_code == 200
        head = await gateway.http.head(f"/verify/{code}", headers={"User-Agent": agent})
        assert head.status_code == 200
    assert await scan_count(gateway, code) == before
    page = response.text
    # The positive control: the page's own POST records one, so a count that
    # did not move above is the GETs recording nothing.
    recorded = await gateway.http.post(f"/verify/{code}", data={"token": token_of(page)})
    assert recorded.status_code == 200
    assert await scan_count(gateway, code) == before + 1
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["cache-control"] == "no-store"
    assert "noindex" in response.headers["x-robots-tag"]
    assert '<html lang="en">' in page
    assert "<h1>Authentic</h1>" in page
    # Every stored value is escaped: the name, the brand, an event's location.
    assert "Sac &lt;b&gt;Rive&lt;/b&gt;" in page and "<b>Rive" not in page
    assert "Maison &lt;Verte&gt; &amp; Fils" in page
    assert "Hamburg &lt;Hafen&gt;" in page
    assert "Shipped" in page
    assert f'href="/dpp/{code}.json"' in page
    assert "The provenance history is intact (1 events)." in page
    nonce = re.search(r"script-src 'nonce-([^']+)'", response.headers["content-security-policy"])
    assert nonce is not None and f'<script nonce="{nonce.group(1)}">' in page


async def test_the_pages_post_records_one_scan(gateway) -> None:
    _, registered = await product(gateway)
    code = registered["verificationCode"]
    page = (await gateway.http.get(f"/verify/{code}")).text
    before = await scan_count(gateway, code)
    response = await gateway.http.post(
        f"/verify/{code}",
        data={"token": token_of(page)},
        headers={"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"},
    )
    assert response.status_code == 200, response.text
    assert await scan_count(gateway, code) == before + 1
    assert f"Your check was recorded (check number {before + 1})." in response.text
    assert 'name="token"' not in response.text
    fetched = await gateway.http.post(
        f"/verify/{code}", data={"token": token_of(page)}, headers={"Accept": "application/json"}
    )
    assert fetched.json() == {"recorded": True, "result": "AUTHENTIC", "scanCount": before + 2}
    assert await scan_count(gateway, code) == before + 2


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ],
    ids=["foreign-origin", "null-origin", "cross-site"],
)
async def test_a_post_from_another_site_records_nothing(gateway, headers) -> None:
    _, registered = await product(gateway)
    code = registered["verificationCode"]
    token = token_of((await gateway.http.get(f"/verify/{code}")).text)
    before = await scan_count(gateway, code)
    refused = await gateway.http.post(f"/verify/{code}", data={"token": token}, headers=headers)
    assert refused.status_code == 403
    assert "This page is out of date" in refused.text
    assert await scan_count(gateway, code) == before
    # The same token from the page's own origin records (the positive control).
    accepted = await gateway.http.post(
        f"/verify/{code}", data={"token": token}, headers={"Origin": "http://testserver"}
    )
    assert accepted.status_code == 200
    assert await scan_count(gateway, code) == before + 1


async def test_a_post_needs_the_token_of_this_code_and_client(gateway) -> None:
    _, registered = await product(gateway)
    _, other = await product(gateway)
    code = registered["verificationCode"]
    key = check_token_key(bytes(range(32)))
    wrong = [
        "",
        "nonsense",
        token_of((await gateway.http.get(f"/verify/{other['verificationCode']}")).text),
        mint_check_token(key, code, "203.0.113.9", time.time()),
        mint_check_token(key, code, "127.0.0.1", time.time() - 3600),
    ]
    before = await scan_count(gateway, code)
    for token in wrong:
        response = await gateway.http.post(f"/verify/{code}", data={"token": token})
        assert response.status_code == 403, token
    assert await scan_count(gateway, code) == before
    good = mint_check_token(key, code, "127.0.0.1", time.time())
    assert (await gateway.http.post(f"/verify/{code}", data={"token": good})).status_code == 200
    assert await scan_count(gateway, code) == before + 1


async def test_a_claimed_product_warns_of_a_cloned_tag(gateway) -> None:
    _, registered = await product(gateway)
    code = registered["verificationCode"]
    await gateway.data(CLAIM, {"c": code})
    page = (await gateway.http.get(f"/verify/{code}")).text
    assert "<h1>Suspicious</h1>" in page
    assert "may be a counterfeit with a cloned tag" in page
    assert "A consumer has registered this product as theirs." in page


async def test_the_language_follows_the_browser(gateway) -> None:
    _, registered = await product(gateway)
    code = registered["verificationCode"]
    french = await gateway.http.get(
        f"/verify/{code}", headers={"Accept-Language": "fr-CA,fr;q=0.9,en;q=0.8"}
    )
    assert '<html lang="fr">' in french.text and "<h1>Authentique</h1>" in french.text
    assert french.headers["content-language"] == "fr"
    assert french.headers["vary"] == "Accept-Language"
    german = await gateway.http.get(f"/verify/{code}", headers={"Accept-Language": "de, fr;q=0.5"})
    assert '<html lang="fr">' in german.text
    other = await gateway.http.get(f"/verify/{code}", headers={"Accept-Language": "de"})
    assert '<html lang="en">' in other.text


async def test_unknown_and_malformed_codes_get_a_page_of_their_own(gateway) -> None:
    unknown = await gateway.http.get("/verify/ZZZZ-ZZZZ-ZZZZ")
    assert unknown.status_code == 404
    assert "No product has this code" in unknown.text and "ZZZZ-ZZZZ-ZZZZ" in unknown.text
    malformed = await gateway.http.get("/verify/not-a-code")
    assert malformed.status_code == 400
    assert "This is not a verification code" in malformed.text
    posted = await gateway.http.post("/verify/<script>", data={"token": "x"})
    assert posted.status_code == 400 and "<script>" not in posted.text
    for response in (unknown, malformed, posted):
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert "Traceback" not in response.text


async def test_robots_are_kept_off_label_pages(gateway) -> None:
    response = await gateway.http.get("/robots.txt")
    assert response.status_code == 200
    assert "Disallow: /verify/" in response.text


async def test_the_page_takes_from_the_bucket_verify_product_takes_from() -> None:
    """GET and POST each take a token of the caller's anonymous bucket: a
    visit that renders and records spends two of verifyProduct's."""
    async with serve(Limits(rate_limit=60, rate_burst=3)) as gateway:
        brand_id, key = await gateway.brand()
        code = (await gateway.product(key, brand_id))["verificationCode"]
        page = await gateway.http.get(f"/verify/{code}")
        recorded = await gateway.http.post(f"/verify/{code}", data={"token": token_of(page.text)})
        assert (page.status_code, recorded.status_code) == (200, 200)
        verify = "mutation($c: String!) { verifyProduct(code: $c) { result } }"
        assert "errors" not in await gateway.execute(verify, {"c": code})
        refused = await gateway.http.post(f"/verify/{code}", data={"token": token_of(page.text)})
        assert refused.status_code == 429
        assert "Too many checks" in refused.text
        assert int(refused.headers["Retry-After"]) >= 1
        limited = await gateway.post(verify, {"c": code})
        assert (limited.status_code, codes(limited.json())) == (429, ["RATE_LIMITED"])
        digital_link = await gateway.http.get(f"/01/{UNIT_GTIN}/21/S1")
        assert digital_link.status_code == 429
        async with gateway.at("198.51.100.20") as elsewhere:
            assert (await elsewhere.http.get(f"/verify/{code}")).status_code == 200
