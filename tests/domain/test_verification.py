from __future__ import annotations

from itertools import product

import pytest

from domain.enums import ProductStatus, ScanResult
from domain.verification import WARNINGS, Outcome, _weigh, assess

A, T, R, F = (
    ProductStatus.ACTIVE,
    ProductStatus.TRANSFERRED,
    ProductStatus.RECALLED,
    ProductStatus.FLAGGED,
)


def test_unknown_code() -> None:
    outcome = assess(
        found=False,
        hash_valid=True,
        signature_valid=True,
        chain_intact=True,
        status=None,
        claimed_by_other=True,
    )
    assert outcome == Outcome(False, ScanResult.UNKNOWN, ())


@pytest.mark.parametrize(
    ("hash_valid", "signature_valid", "chain_intact", "status", "result", "warnings"),
    [
        (True, True, True, A, ScanResult.AUTHENTIC, []),
        (True, True, True, T, ScanResult.AUTHENTIC, []),
        (True, True, True, F, ScanResult.AUTHENTIC, ["flagged"]),
        (True, True, True, R, ScanResult.SUSPICIOUS, ["recalled"]),
        (True, True, False, A, ScanResult.SUSPICIOUS, ["chain"]),
        (True, True, False, R, ScanResult.SUSPICIOUS, ["recalled", "chain"]),
        (False, True, True, A, ScanResult.COUNTERFEIT, ["hash"]),
        (True, False, True, A, ScanResult.COUNTERFEIT, ["signature"]),
        (False, False, True, R, ScanResult.COUNTERFEIT, ["hash", "signature", "recalled"]),
        (False, True, False, A, ScanResult.COUNTERFEIT, ["hash", "chain"]),
    ],
)
def test_verdicts(
    hash_valid: bool,
    signature_valid: bool,
    chain_intact: bool,
    status: ProductStatus,
    result: ScanResult,
    warnings: list[str],
) -> None:
    outcome = assess(
        found=True,
        hash_valid=hash_valid,
        signature_valid=signature_valid,
        chain_intact=chain_intact,
        status=status,
        claimed_by_other=False,
    )
    assert outcome.result is result
    assert outcome.authentic is (result is ScanResult.AUTHENTIC)
    assert outcome.warnings == tuple(WARNINGS[name] for name in warnings)


@pytest.mark.parametrize(
    ("hash_valid", "status", "result", "warnings"),
    [
        (True, A, ScanResult.SUSPICIOUS, ["claimed"]),
        (True, R, ScanResult.SUSPICIOUS, ["recalled", "claimed"]),
        (False, A, ScanResult.COUNTERFEIT, ["hash", "claimed"]),
    ],
)
def test_a_stranger_scanning_a_claimed_product_is_warned_of_a_cloned_tag(
    hash_valid: bool, status: ProductStatus, result: ScanResult, warnings: list[str]
) -> None:
    outcome = assess(
        found=True,
        hash_valid=hash_valid,
        signature_valid=True,
        chain_intact=True,
        status=status,
        claimed_by_other=True,
    )
    assert outcome.result is result
    assert outcome.authentic is False
    assert outcome.warnings == tuple(WARNINGS[name] for name in warnings)
    assert "cloned tag" in WARNINGS["claimed"]


@pytest.mark.parametrize("status", [*ProductStatus, None])
@pytest.mark.parametrize("flags", list(product((False, True), repeat=4)))
def test_the_all_clear_shortcut_is_the_weighed_outcome(
    status: ProductStatus | None, flags: tuple[bool, bool, bool, bool]
) -> None:
    """``assess`` answers a passing verification with one shared Outcome:
    every combination of checks gets what weighing them gives."""
    hash_valid, signature_valid, chain_intact, claimed = flags
    outcome = assess(
        found=True,
        hash_valid=hash_valid,
        signature_valid=signature_valid,
        chain_intact=chain_intact,
        status=status,
        claimed_by_other=claimed,
    )
    assert outcome == _weigh(hash_valid, signature_valid, chain_intact, status, claimed)
