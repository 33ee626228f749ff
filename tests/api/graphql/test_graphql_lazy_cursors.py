"""Cursors are encrypted per edge; a page read without them mints none."""

from __future__ import annotations

from typing import Any

import pytest

from storage.cursor import CursorCodec

PAGE = """query($b: ID!) { brand(id: $b) { products(first: 5) {
    edges { node { id } %s } pageInfo { hasNextPage %s } } } }"""


@pytest.fixture
def minted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = CursorCodec.encode

    def counting(self: CursorCodec, *args: Any) -> str:
        calls.append(args[0])
        return real(self, *args)

    monkeypatch.setattr(CursorCodec, "encode", counting)
    return calls


async def test_cursors_are_minted_only_when_selected(
    sqlite_gateway: Any, minted: list[str]
) -> None:
    gateway = sqlite_gateway
    brand = await gateway.register_brand("Cursors")
    for _ in range(3):
        await gateway.register_product(brand)
    minted.clear()
    await gateway.data(PAGE % ("", ""), {"b": brand.id}, key=brand.key)
    assert minted == []
    data = await gateway.data(PAGE % ("cursor", "endCursor"), {"b": brand.id}, key=brand.key)
    connection = data["brand"]["products"]
    assert len(minted) == 3 + 1
    assert connection["pageInfo"]["endCursor"] and all(e["cursor"] for e in connection["edges"])
