from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from domain.errors import BadUserInput, Conflict
from domain.ledger import (
    CREDIT,
    LEDGER_LINES_MAX,
    PLATFORM_GRANTS,
    PLATFORM_REVENUE,
    TRANSACTION_ID_PREFIX,
    LedgerLine,
    LedgerTransaction,
    brand_account,
    build_transaction,
    can_reverse,
    check_balanced,
    check_reversible,
    reversal_id,
    reversal_of,
    transaction_id,
)

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
BRAND = brand_account("brd_1")


def line(account: str, amount: str, currency: str = CREDIT) -> LedgerLine:
    return LedgerLine(account, currency, Decimal(amount))


GRANT = (line(PLATFORM_GRANTS, "-10"), line(BRAND, "10"))


def txn(lines: tuple[LedgerLine, ...] = GRANT, **changes: object) -> LedgerTransaction:
    fields: dict[str, object] = {
        "id": transaction_id("grant", "key-1"),
        "memo": "welcome",
        "created_at": T0,
        "lines": lines,
    }
    fields.update(changes)
    return build_transaction(**fields)  # type: ignore[arg-type]


def test_check_balanced_returns_lines_at_scale() -> None:
    checked = check_balanced(GRANT)
    assert [str(entry.amount) for entry in checked] == ["-10.00", "10.00"]


def test_three_way_split_balances() -> None:
    lines = (line(BRAND, "-1.00"), line(PLATFORM_REVENUE, "0.90"), line(PLATFORM_GRANTS, "0.10"))
    assert len(check_balanced(lines)) == 3


@pytest.mark.parametrize(
    "lines",
    [
        (),
        (line(BRAND, "0"),),
        (line(BRAND, "1"),),
        (line(PLATFORM_GRANTS, "-1"), line(BRAND, "0.99")),
        (line(PLATFORM_GRANTS, "-1"), line(BRAND, "1"), line(PLATFORM_REVENUE, "0")),
        (line(PLATFORM_GRANTS, "-1"), line(BRAND, "0.5"), line(BRAND, "0.5")),
        (line(PLATFORM_GRANTS, "-0.001"), line(BRAND, "0.001")),
        (line(PLATFORM_GRANTS, "-1", "USD"), line(BRAND, "1", "USD")),
        (line("platform:cash", "-1"), line(BRAND, "1")),
        (line(PLATFORM_GRANTS, "NaN"), line(BRAND, "1")),
    ],
    ids=[
        "empty",
        "one-zero-line",
        "one-line",
        "unbalanced",
        "zero-line",
        "account-twice",
        "too-many-decimals",
        "unknown-currency",
        "unknown-account",
        "nan",
    ],
)
def test_check_balanced_refuses(lines: tuple[LedgerLine, ...]) -> None:
    with pytest.raises(BadUserInput):
        check_balanced(lines)


def test_line_count_limit() -> None:
    brands = [brand_account(f"brd_{i}") for i in range(LEDGER_LINES_MAX)]
    at_limit = [line(PLATFORM_GRANTS, f"-{LEDGER_LINES_MAX - 1}")]
    at_limit += [line(name, "1") for name in brands[: LEDGER_LINES_MAX - 1]]
    assert len(check_balanced(at_limit)) == LEDGER_LINES_MAX
    over = [line(PLATFORM_GRANTS, f"-{LEDGER_LINES_MAX}")] + [line(n, "1") for n in brands]
    with pytest.raises(BadUserInput):
        check_balanced(over)


def test_memo_limit() -> None:
    assert txn(memo="m" * 500).memo == "m" * 500
    with pytest.raises(BadUserInput):
        txn(memo="m" * 501)


def test_transaction_id_is_deterministic_and_scoped() -> None:
    first = transaction_id("grant", "key-1")
    assert first == transaction_id("grant", "key-1")
    assert first.startswith(TRANSACTION_ID_PREFIX)
    assert len(first) == len(TRANSACTION_ID_PREFIX) + 32
    others = {
        transaction_id("grant", "key-2"),
        transaction_id("charge", "key-1"),
        transaction_id("grantk", "ey-1"),
        transaction_id("grant:key", "-1"),
    }
    assert first not in others and len(others) == 4


def test_reversal_negates_every_line_and_links_the_original() -> None:
    original = txn()
    reversal = reversal_of(original, created_at=T0)
    assert reversal.reverses == original.id
    assert reversal.id == reversal_id(original.id) != original.id
    assert reversal.lines == tuple(entry.negated() for entry in original.lines)
    assert [str(entry.amount) for entry in reversal.lines] == ["10.00", "-10.00"]
    assert reversal.memo == f"Reversal of {original.id}"
    assert reversal.is_reversal and not original.is_reversal
    assert reversal_of(original, created_at=T0, memo="typo").memo == "typo"


def test_reversal_id_is_stable_so_a_second_reversal_collides() -> None:
    original = txn()
    assert reversal_of(original, created_at=T0).id == reversal_of(original, created_at=T0).id


def test_reversing_a_reversal_is_refused() -> None:
    reversal = reversal_of(txn(), created_at=T0)
    assert not can_reverse(reversal, None)
    with pytest.raises(Conflict):
        reversal_of(reversal, created_at=T0)


def test_reversing_twice_is_refused() -> None:
    original = txn()
    assert can_reverse(original, None)
    assert not can_reverse(original, "ltx_other")
    with pytest.raises(Conflict):
        check_reversible(original, "ltx_other")
    with pytest.raises(Conflict):
        reversal_of(original, created_at=T0, reversed_by="ltx_other")
