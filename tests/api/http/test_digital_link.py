"""GS1 Digital Link: registration with a GTIN and a serial, resolution of
``/01/.../21/...`` by content negotiation (redirect, linkset), the resolver
description, labels that carry the URI, and the refusals."""

from __future__ import annotations

import re
import uuid
from typing import Any

from _asgi import codes
from test_qr import decoded

from domain.gs1 import check_digit

PUBLIC_URL = "http://127.0.0.1:8000"
VOC = "https://gs1.org/voc/"
REGISTER = """mutation($input: RegisterProductInput!) {
    registerProduct(input: $input) { id gtin lot serial labelUrl verificationCode qrUrl }
}"""
PUBLIC_FIELDS = "query($c: String!) { productByCode(code: $c) { gtin lot serial } }"
LINK_ATTRIBUTES = {"href", "title", "hreflang", "type", "context", "fwqs", "public"}
SCANS = "query($c: String!) { verification(code: $c) { scanCount } }"


def new_gtin() -> str:
    """A GTIN-13 under the demonstration prefix 952, its check digit computed."""
    body = "952" + str(uuid.uuid4().int)[:9]
    return body + str(check_digit(body))


async def register(gateway: Any, brand: Any, **gs1: Any) -> dict[str, Any]:
    body = await gateway.execute(
        REGISTER,
        {"input": {"brandId": brand.id, "name": f"Unit {uuid.uuid4().hex[:6]}", **gs1}},
        key=brand.key,
    )
    assert "errors" not in body, body
    product: dict[str, Any] = body["data"]["registerProduct"]
    return product


def assert_gs1_linkset(body: dict[str, Any]) -> None:
    """The rules of the GS1-Conformant Resolver's linkset schema: one or more
    context objects, each an http(s) anchor and relations that are lowercase
    registered names or http(s) URIs, each an array of links with an http(s)
    href and a title and nothing but the link attributes it names."""
    assert set(body) == {"linkset"} and body["linkset"]
    for context in body["linkset"]:
        assert re.match(r"^https?://[a-zA-Z0-9./]+", context["anchor"])
        for name, links in context.items():
            if name in ("anchor", "itemDescription", "description"):
                continue
            assert re.fullmatch(r"[a-z-]+|https?://[a-zA-Z0-9./]+", name), name
            for link in links:
                assert set(link) <= LINK_ATTRIBUTES and {"href", "title"} <= set(link), link
                assert re.match(r"^https?://[a-zA-Z0-9./]+", link["href"])
                assert all(
                    re.fullmatch(r"\w{2}(-\w{2})?", lang) for lang in link.get("hreflang", [])
                )


async def test_a_unit_resolves_to_its_page_or_its_linkset(gateway) -> None:
    brand = await gateway.register_brand()
    gtin = new_gtin()
    product = await register(gateway, brand, gtin=gtin, serial="SN/42%", lot="L7")
    code = product["verificationCode"]
    assert (product["gtin"], product["serial"], product["lot"]) == ("0" + gtin, "SN/42%", "L7")
    uri = f"/01/0{gtin}/10/L7/21/SN%2F42%25"
    assert product["labelUrl"] == PUBLIC_URL + uri
    before = (await gateway.data(SCANS, {"c": code}))["verification"]["scanCount"]

    browser = await gateway.http.get(uri, headers={"Accept": "text/html,*/*;q=0.8"})
    assert browser.status_code == 307
    assert browser.headers["location"] == f"{PUBLIC_URL}/verify/{code}"
    assert f'<{PUBLIC_URL}{uri}?linkType=linkset>; rel="linkset"' in browser.headers["link"]
    # The GTIN in any length, the lot omitted: the same unit.
    short = await gateway.http.get(f"/01/{gtin}/21/SN%2F42%25")
    assert (short.status_code, short.headers["location"]) == (307, browser.headers["location"])

    linkset = await gateway.http.get(uri, headers={"Accept": "application/linkset+json"})
    assert linkset.status_code == 200
    assert linkset.headers["content-type"] == "application/linkset+json"
    assert "json-ld#context" in linkset.headers["link"]
    body = linkset.json()
    assert_gs1_linkset(body)
    (context,) = body["linkset"]
    assert context["anchor"] == PUBLIC_URL + uri
    page = f"{PUBLIC_URL}/verify/{code}"
    assert context[VOC + "pip"][0]["href"] == page
    assert context[VOC + "verificationService"][0]["href"] == page
    assert context[VOC + "defaultLink"][0]["href"] == page
    assert context[VOC + "certificationInfo"][0]["href"] == f"{PUBLIC_URL}/dpp/{code}.json"
    assert (await gateway.http.get(f"{uri}?linkType=all")).json() == body
    to_passport = await gateway.http.get(f"{uri}?linkType=gs1:certificationInfo")
    assert to_passport.headers["location"] == f"{PUBLIC_URL}/dpp/{code}.json"
    fallback = await gateway.http.get(f"{uri}?linkType=gs1:nutritionalInfo")
    assert fallback.headers["location"] == page
    # Resolving records nothing; the page it leads to does, on the person's POST.
    assert (await gateway.data(SCANS, {"c": code}))["verification"]["scanCount"] == before

    label = await gateway.http.get(f"/qr/{code}.png")
    assert decoded(label.content) == PUBLIC_URL + uri
    # Anyone sees the GTIN and the lot, not the serial (it leads to the code).
    other = await gateway.register_brand()
    seen = await gateway.execute(PUBLIC_FIELDS, {"c": code}, key=other.key)
    assert seen["data"]["productByCode"] == {"gtin": "0" + gtin, "lot": "L7", "serial": None}
    assert [error["path"] for error in seen["errors"]] == [["productByCode", "serial"]]


async def test_malformed_links_are_400_with_the_reason(gateway) -> None:
    gtin = "0" + new_gtin()
    wrong_digit = gtin[:-1] + str((int(gtin[-1]) + 1) % 10)
    for path, reason in (
        (f"/01/{wrong_digit}/21/1", "check digit"),
        (f"/01/{gtin}/99/1", "AI '99' is not a key qualifier"),
        (f"/01/{gtin}/21/1/10/L", "must come before AI 21"),
        (f"/01/{gtin}/21", "has no value"),
    ):
        response = await gateway.http.get(path)
        assert response.status_code == 400, path
        assert reason in response.text, response.text
        assert response.headers["access-control-allow-origin"] == "*"


async def test_unknown_units_are_404(gateway) -> None:
    brand = await gateway.register_brand()
    gtin = new_gtin()
    await register(gateway, brand, gtin=gtin, serial="S1", lot="L1")
    for path in (f"/01/{gtin}/21/S2", f"/01/{gtin}/10/L2/21/S1", f"/01/{gtin}"):
        assert (await gateway.http.get(path)).status_code == 404, path
    assert (await gateway.http.get(f"/01/{gtin}/10/L1/21/S1")).status_code == 307


async def test_registration_refuses_bad_gs1_input_and_a_second_unit(gateway) -> None:
    brand = await gateway.register_brand()
    gtin = new_gtin()
    bad = (
        ({"gtin": gtin[:-1] + str((int(gtin[-1]) + 1) % 10)}, "input.gtin", "check digit"),
        ({"gtin": "12345"}, "input.gtin", "8, 12, 13 or 14 digits"),
        ({"serial": "S1"}, "input.serial", "send gtin too"),
        ({"gtin": gtin, "serial": "x" * 21}, "input.serial", "1 to 20"),
        ({"gtin": gtin, "serial": "a b"}, "input.serial", "character set 82"),
        ({"gtin": gtin, "lot": "ü"}, "input.lot", "character set 82"),
    )
    for fields, field, reason in bad:
        body = await gateway.execute(
            REGISTER, {"input": {"brandId": brand.id, "name": "X", **fields}}, key=brand.key
        )
        assert codes(body) == ["BAD_USER_INPUT"], body
        message = body["errors"][0]["message"]
        assert message.startswith(field) and reason in message, message
    await register(gateway, brand, gtin=gtin, serial="S1")
    again = await gateway.execute(
        REGISTER,
        {"input": {"brandId": brand.id, "name": "Other", "gtin": "0" + gtin, "serial": "S1"}},
        key=brand.key,
    )
    assert codes(again) == ["CONFLICT"]
    assert "already has a product with serial 'S1'" in again["errors"][0]["message"]
    # A GTIN alone is a product class: stored, but the label stays the verify URL.
    plain = await register(gateway, brand, gtin=gtin)
    assert plain["labelUrl"] == f"{PUBLIC_URL}/verify/{plain['verificationCode']}"


async def test_the_resolver_describes_itself(gateway) -> None:
    response = await gateway.http.get("/.well-known/gs1resolver")
    assert response.status_code == 200
    assert response.json() == {
        "name": "proofgate",
        "resolverRoot": PUBLIC_URL,
        "supportedPrimaryKeys": ["01"],
        "supportedLinkType": [{"namespace": VOC, "prefix": "gs1:"}],
        "linkTypeDefaultCanBeLinkset": False,
    }
    options = await gateway.http.options(f"/01/0{new_gtin()}/21/1")
    assert options.status_code == 204 and "GET" in options.headers["allow"]


async def test_the_passport_names_the_registered_gtin_and_serial(gateway) -> None:
    brand = await gateway.register_brand()
    gtin = new_gtin()
    product = await register(gateway, brand, gtin=gtin, serial="P-1", sku="4006381333931")
    passport = await gateway.http.get(f"/dpp/{product['verificationCode']}.json")
    identification = passport.json()["identification"]
    assert (identification["gtin"], identification["serialNumber"]) == ("0" + gtin, "P-1")
