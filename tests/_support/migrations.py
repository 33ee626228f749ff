"""A fake version-2 step for the migration tests: it rewrites every brand
index entry (AP02), two a page, saving its cursor after each page."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from services.migrations import Progress, Step
from storage import Put, Storage, Update
from storage.access_patterns import BRANDS_NEWEST
from storage.keys import Key

PAGE = 2
TENANT = "migration"


class Interrupted(Exception):
    """Stands in for a crash or a Ctrl-C in the middle of a step."""


@dataclass
class FakeStep:
    """``fail_after_pages``: raise after saving that many pages (once)."""

    fail_after_pages: int | None = None
    rewritten: Counter[str] = field(default_factory=Counter)
    interruption: type[BaseException] = Interrupted

    def step(self) -> Step:
        return Step(2, "give every brand index entry shape 2", self.run)

    async def run(self, storage: Storage, progress: Progress) -> None:
        after, done, pages = progress.position, progress.done, 0
        while True:
            page = await storage.query(BRANDS_NEWEST, {}, tenant=TENANT, first=PAGE, after=after)
            for item in page.items:
                key = Key(item["PK"], item["SK"])
                await storage.transact_write([Update(key, set={"shape": 2})])
                self.rewritten[item["SK"]] += 1
            done += len(page.items)
            after = page.end_cursor or after
            await progress.advance(after, done)
            pages += 1
            if not page.has_next_page:
                return
            if pages == self.fail_after_pages:
                self.fail_after_pages = None
                raise self.interruption


async def write_brand_entries(storage: Storage, count: int) -> list[str]:
    keys = [f"BRAND#b{n:03d}" for n in range(count)]
    for sk in keys:
        item = {"PK": "BRAND_INDEX", "SK": sk, "entity": "BrandIndexEntry", "brandId": sk[6:]}
        await storage.transact_write([Put(item)])
    return keys


async def shapes(storage: Storage) -> dict[str, object]:
    page = await storage.query(BRANDS_NEWEST, {}, tenant=TENANT, first=100)
    return {item["SK"]: item.get("shape") for item in page.items}
