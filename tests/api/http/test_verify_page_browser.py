"""The verification page as a person's phone shows it: ``proofgate serve
--demo`` in a subprocess, headless Chromium at 390x844, axe-core
(``tests/clients/axe``, pinned, installed with ``npm ci``) injected into the
page. A visit with scripts records one scan through the page's own POST; a
visit without scripts records one when the button is pressed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from _chromium import Page, chromium_or_skip, chromium_page
from _node import npm_ci
from _serve import Served, serve

from api.demo.loader import DEMO_KEYS_FILE

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("verify-page-browser")]

AXE = Path(__file__).resolve().parents[2] / "clients" / "axe"
PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True}
PRODUCTS = """query($b: ID!) { brand(id: $b) { products(first: 10) {
    edges { node { name verificationCode labelUrl } } } } }"""
SCANS = "query($c: String!) { verification(code: $c) { scanCount } }"
SERIOUS = ("serious", "critical")


@pytest.fixture(scope="module")
def axe_source() -> str:
    """``npm ci`` once (under a lock, for parallel workers); skipped without Node."""
    return (npm_ci(AXE) / "node_modules" / "axe-core" / "axe.min.js").read_text()


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("verify-page") / "data", "--demo") as gateway:
        yield gateway


def graphql(served: Served, query: str, variables: dict[str, Any], key: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = {"query": query, "variables": variables}
    response = httpx.post(f"{served.url}/graphql", json=body, headers=headers, timeout=10)
    answer = response.json()
    assert "errors" not in answer, answer
    return answer["data"]


def demo_product(served: Served, name: str) -> dict[str, Any]:
    brand = json.loads((served.data_dir / DEMO_KEYS_FILE).read_text())["brands"]["aurora"]
    data = graphql(served, PRODUCTS, {"b": brand["id"]}, brand["api_key"])
    products = {e["node"]["name"]: e["node"] for e in data["brand"]["products"]["edges"]}
    product: dict[str, Any] = products[name]
    return product


def demo_code(served: Served, name: str) -> str:
    code: str = demo_product(served, name)["verificationCode"]
    return code


def scan_count(served: Served, code: str) -> int:
    count: int = graphql(served, SCANS, {"c": code})["verification"]["scanCount"]
    return count


async def serious_violations(page: Page, axe: str) -> list[dict[str, Any]]:
    await page.evaluate(axe)
    found: list[dict[str, Any]] = await page.evaluate(
        "axe.run(document).then(r => r.violations.map(v => "
        "({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.html)})))"
    )
    return [v for v in found if v["impact"] in SERIOUS]


async def on_phone(page: Page) -> None:
    await page.send("Emulation.setDeviceMetricsOverride", **PHONE)


async def test_a_phone_shows_the_verdict_and_records_the_visit(
    chromium: str, served: Served, axe_source: str, tmp_path: Path
) -> None:
    code = demo_code(served, "Meridian Chronograph")
    before = scan_count(served, code)
    async with chromium_page(chromium, tmp_path / "profile") as page:
        await on_phone(page)
        await page.send("Page.navigate", url=f"{served.url}/verify/{code}")
        recorded = await page.wait_for("document.getElementById('record-status')?.textContent")
        assert recorded == f"Your check was recorded (check number {before + 1})."
        assert scan_count(served, code) == before + 1
        assert await page.evaluate("document.querySelector('h1').textContent") == "Authentic"
        assert await page.evaluate("document.documentElement.lang") == "en"
        # Nothing is wider than the phone's screen.
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shot = await page.screenshot(tmp_path / "verify-phone.png")
        assert await serious_violations(page, axe_source) == []

        # The unknown code's page, in the language the browser asks for.
        await page.send("Network.setExtraHTTPHeaders", headers={"Accept-Language": "fr-FR,fr"})
        await page.send("Page.navigate", url=f"{served.url}/verify/ZZZZ-ZZZZ-ZZZZ")
        await page.wait_for(
            "document.querySelector('h1')?.textContent === 'Aucun produit ne porte ce code'"
        )
        assert await page.evaluate("document.documentElement.lang") == "fr"
        await page.screenshot(tmp_path / "verify-unknown.png")
        assert await serious_violations(page, axe_source) == []
        assert page.errors() == [] or all("404" in e for e in page.errors())
    assert scan_count(served, code) == before + 1
    assert shot.stat().st_size > 10_000


async def dom_text(page: Page, selector: str) -> str | None:
    """Read through the DOM domain, which works with the page's scripts off;
    None while there is no such element (or the document was just replaced,
    a navigation racing the read)."""
    try:
        document = await page.send("DOM.getDocument")
        root = document["root"]["nodeId"]
        found = await page.send("DOM.querySelector", nodeId=root, selector=selector)
        if not found.get("nodeId"):
            return None
        html: str = (await page.send("DOM.getOuterHTML", nodeId=found["nodeId"]))["outerHTML"]
    except AssertionError:
        return None
    return html


async def click(page: Page, selector: str) -> None:
    document = await page.send("DOM.getDocument")
    found = await page.send(
        "DOM.querySelector", nodeId=document["root"]["nodeId"], selector=selector
    )
    quad = (await page.send("DOM.getBoxModel", nodeId=found["nodeId"]))["model"]["content"]
    x, y = (quad[0] + quad[4]) / 2, (quad[1] + quad[5]) / 2
    for kind in ("mousePressed", "mouseReleased"):
        await page.send(
            "Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1
        )


async def test_without_scripts_the_button_records_the_check(
    chromium: str, served: Served, tmp_path: Path
) -> None:
    code = demo_code(served, "Meridian Chronograph")
    async with chromium_page(chromium, tmp_path / "profile") as page:
        await on_phone(page)
        await page.send("Emulation.setScriptExecutionDisabled", value=True)
        before = scan_count(served, code)
        await page.send("Page.navigate", url=f"{served.url}/verify/{code}")
        for _ in range(100):
            if await dom_text(page, "form#record button"):
                break
            await asyncio.sleep(0.1)
        # The page is up and has recorded nothing: its script did not run.
        assert scan_count(served, code) == before
        await click(page, "form#record button")
        for _ in range(100):
            status = await dom_text(page, "p.status")
            if status and "recorded" in status:
                break
            await asyncio.sleep(0.1)
        assert status is not None and f"check number {before + 1}" in status
        assert scan_count(served, code) == before + 1


async def test_a_demo_products_digital_link_lands_a_browser_on_its_page(
    chromium: str, served: Served, tmp_path: Path
) -> None:
    product = demo_product(served, "Meridian Chronograph")
    link = product["labelUrl"]
    assert link == f"{served.url}/01/09521000000018/21/MER-000147"
    code = product["verificationCode"]
    async with chromium_page(chromium, tmp_path / "profile") as page:
        await on_phone(page)
        await page.send("Page.navigate", url=link)
        await page.wait_for("document.querySelector('h1')?.textContent === 'Authentic'")
        assert await page.evaluate("location.pathname") == f"/verify/{code}"
    linkset = httpx.get(link, headers={"Accept": "application/linkset+json"}, timeout=10)
    assert linkset.status_code == 200
    assert linkset.headers["content-type"] == "application/linkset+json"
    (context,) = linkset.json()["linkset"]
    assert context["anchor"] == link
    assert context["https://gs1.org/voc/verificationService"][0]["href"].endswith(f"/verify/{code}")
    wrong = httpx.get(link.replace("09521000000018", "09521000000019"), timeout=10)
    assert wrong.status_code == 400 and "check digit" in wrong.text
