from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from domain.enums import Plan
from domain.errors import BadUserInput
from domain.idempotency import request_fingerprint

BODY = {"brandId": "brd_1", "amount": Decimal("1.50"), "memo": "hello", "tags": ["a", "b"]}


def test_fingerprint_is_sha256_hex_and_stable() -> None:
    first = request_fingerprint("grantCredits", BODY)
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert request_fingerprint("grantCredits", dict(BODY)) == first


def test_key_order_does_not_matter() -> None:
    reordered = dict(reversed(list(BODY.items())))
    assert request_fingerprint("grantCredits", reordered) == request_fingerprint(
        "grantCredits", BODY
    )


@pytest.mark.parametrize(
    "change",
    [
        {"amount": Decimal("1.51")},
        {"memo": "hello "},
        {"tags": ["b", "a"]},
        {"brandId": "brd_2"},
        {"extra": None},
    ],
    ids=str,
)
def test_any_change_to_the_body_changes_the_fingerprint(change: dict[str, object]) -> None:
    assert request_fingerprint("grantCredits", {**BODY, **change}) != request_fingerprint(
        "grantCredits", BODY
    )


def test_operation_is_part_of_the_fingerprint() -> None:
    assert request_fingerprint("grantCredits", BODY) != request_fingerprint("registerProduct", BODY)


def test_equal_decimals_and_instants_fingerprint_alike() -> None:
    at = datetime(2026, 3, 10, 12, tzinfo=UTC)
    elsewhere = at.astimezone(timezone(timedelta(hours=-5)))
    assert request_fingerprint("op", {"a": Decimal("1.5"), "t": at}) == request_fingerprint(
        "op", {"a": Decimal("1.50"), "t": elsewhere}
    )


@dataclass(frozen=True)
class Input:
    name: str
    plan: Plan
    latitude: float | None


def test_dataclass_inputs_enums_and_floats() -> None:
    value = request_fingerprint("registerBrand", Input("Acme", Plan.FREE, 48.8566))
    same = request_fingerprint(
        "registerBrand", {"name": "Acme", "plan": "FREE", "latitude": 48.8566}
    )
    assert value == same
    assert value != request_fingerprint("registerBrand", Input("Acme", Plan.PRO, 48.8566))


@pytest.mark.parametrize(
    "body",
    [float("nan"), float("inf"), Decimal("NaN"), {1: "x"}, object()],
    ids=["float-nan", "float-inf", "decimal-nan", "int-key", "object"],
)
def test_refuses_what_has_no_canonical_form(body: object) -> None:
    with pytest.raises(BadUserInput):
        request_fingerprint("op", {"value": body})


def test_huge_exponents_stay_small() -> None:
    assert request_fingerprint("op", Decimal("1E+999999999")) != request_fingerprint(
        "op", Decimal("1E+999999998")
    )


def test_hostile_nesting_is_bad_input() -> None:
    body: object = "leaf"
    for _ in range(200):
        body = [body]
    with pytest.raises(BadUserInput):
        request_fingerprint("op", body)
