"""The explorer in a real browser: ``proofgate serve --demo`` in a subprocess,
GraphiQL opened by headless Chromium, example operations run from the page.

It proves what a person would check by hand: the page renders with the
example tabs, runs a public query and a brand query (its key prefilled in the
Headers pane), and loads nothing from anywhere but the gateway itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _chromium import Page, chromium_or_skip, chromium_page
from _serve import Served, serve

from api.demo.loader import DEMO_KEYS_FILE

pytestmark = pytest.mark.slow

RESULT = "document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.getValue()"
QUERY = "document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()"
EDITOR_DEBOUNCE_SECONDS = 0.4
CLEAR_RESULT = "document.querySelector('.graphiql-response .CodeMirror')?.CodeMirror.setValue('')"
TAB_TITLES = "[...document.querySelectorAll('.graphiql-tab-button')].map(b => b.textContent)"


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("explorer") / "data", "--demo") as gateway:
        yield gateway


async def run_tab(page: Page, title: str) -> dict[str, Any]:
    """Select the tab, press the execute button, and read the response pane."""
    selected = await page.evaluate(
        f"""(() => {{
            const button = [...document.querySelectorAll('.graphiql-tab-button')]
                .find(b => b.textContent === {json.dumps(title)});
            if (!button) return false;
            button.click();
            return true;
        }})()"""
    )
    assert selected, f"no tab {title}"
    await page.wait_for(
        f"document.querySelector('.graphiql-tab-active .graphiql-tab-button')?.textContent"
        f" === {json.dumps(title)}"
    )
    await page.wait_for(f"{QUERY}.includes({json.dumps(f' {title}(')})")
    # GraphiQL reads the operation name from the editor 100 ms after a change.
    await asyncio.sleep(EDITOR_DEBOUNCE_SECONDS)
    await page.evaluate(CLEAR_RESULT)
    await page.evaluate("document.querySelector('.graphiql-execute-button').click()")
    text = await page.wait_for(f"(() => {{ const t = {RESULT}; return t && t.trim(); }})()")
    body: dict[str, Any] = json.loads(text)
    return body


async def test_the_explorer_runs_example_operations_offline(
    chromium: str, served: Served, tmp_path: Path
) -> None:
    url = served.url
    demo = json.loads((served.data_dir / DEMO_KEYS_FILE).read_text())["brands"]["aurora"]
    async with chromium_page(chromium, tmp_path / "profile") as page:
        await page.send("Page.navigate", url=f"{url}/graphql")
        titles = await page.wait_for(
            f"(() => {{ const t = {TAB_TITLES}; return t.length && t; }})()"
        )
        assert titles == [
            "Explore",
            "Verify",
            "RecordScan",
            "MyBrand",
            "Threats",
            "Analytics",
            "Ingest",
            "Node",
            "LiveAlerts",
        ]
        await page.wait_for("!!document.querySelector('.graphiql-query-editor .CodeMirror')")

        explored = await run_tab(page, "Explore")
        assert "errors" not in explored, explored
        products = [edge["node"] for edge in explored["data"]["explore"]["edges"]]
        assert {"Meridian Chronograph", "Rosehip Renewal Serum"} <= {p["name"] for p in products}

        verified = await run_tab(page, "Verify")
        assert "errors" not in verified, verified
        assert verified["data"]["verification"]["result"] == "AUTHENTIC"

        mine = await run_tab(page, "MyBrand")
        assert "errors" not in mine, mine
        assert mine["data"]["viewer"] == {"role": "BRAND", "brandId": demo["id"]}
        brand_products = mine["data"]["brand"]["products"]["edges"]
        assert len(brand_products) == 4
        assert all(edge["node"]["verificationCode"] for edge in brand_products)

        refetched = await run_tab(page, "Node")
        assert "errors" not in refetched, refetched
        assert refetched["data"]["node"]["__typename"] == "Brand"
        assert refetched["data"]["node"]["id"] == demo["id"]
        shot = await page.screenshot(tmp_path / "explorer.png")

        # The brand tab's Authorization header came prefilled in the editor.
        headers = await page.evaluate(
            "[...document.querySelectorAll('.graphiql-editor-tool .CodeMirror')]"
            ".map(e => e.CodeMirror.getValue()).join('\\n')"
        )
        assert f"Bearer {demo['api_key']}" in headers

        analytics = await run_tab(page, "Analytics")
        assert "errors" not in analytics, analytics
        daily = analytics["data"]["brand"]["analytics"]["daily"]
        assert len(daily) == 7 and all(day["scans"] > 0 for day in daily)

        # The demo sent this event already: running the tab replays it.
        ingested = await run_tab(page, "Ingest")
        assert "errors" not in ingested, ingested
        receipt = ingested["data"]["ingestEvent"]
        assert receipt["integrationId"] == demo["integration_id"]
        assert (receipt["event"]["type"], receipt["event"]["source"]) == ("SHIPPED", "SHIPPING")
        assert receipt["event"]["sequence"] == 3

        requested = page.requested_urls()
        assert any(u.endswith("/graphql") for u in requested)
        assert any("/graphql/static/graphiql.min.js" in u for u in requested)
        foreign = [u for u in requested if not u.startswith((url, "data:"))]
        assert foreign == [], f"the explorer must work offline, but fetched {foreign}"
        assert page.errors() == []
    assert shot.stat().st_size > 10_000
