from __future__ import annotations

import pytest

from domain.errors import BadUserInput
from domain.ledger import (
    PLATFORM_GRANTS,
    PLATFORM_REVENUE,
    Account,
    brand_account,
    parse_account,
)

BRAND = "01JD5Z8Q4V7W3X2Y1Z0A9B8C7D"


def test_brand_account_round_trips() -> None:
    name = brand_account(BRAND)
    assert name == f"brand:{BRAND}:credits"
    account = parse_account(name)
    assert account == Account(name, BRAND)
    assert not account.may_go_negative


@pytest.mark.parametrize("name", [PLATFORM_GRANTS, PLATFORM_REVENUE])
def test_platform_accounts(name: str) -> None:
    account = parse_account(name)
    assert account.brand_id is None
    assert account.may_go_negative


@pytest.mark.parametrize(
    "name",
    [
        "",
        "platform:other",
        "platform:grants ",
        "brand::credits",
        f"brand:{BRAND}",
        f"brand:{BRAND}:credits:x",
        f"brand:{BRAND}:debits",
        "brand:a:b:credits",
        "brand:a b:credits",
        f"BRAND:{BRAND}:credits",
        "brand:" + "a" * 129 + ":credits",
    ],
)
def test_parse_account_refuses(name: str) -> None:
    with pytest.raises(BadUserInput):
        parse_account(name)


@pytest.mark.parametrize("brand_id", ["", "a:b", "a b", "a\n", "x" * 129])
def test_brand_account_refuses_ids_that_would_forge_names(brand_id: str) -> None:
    with pytest.raises(BadUserInput):
        brand_account(brand_id)
