from __future__ import annotations

import re

import pytest

from domain.countries import COUNTRY_CODES, is_country


def test_the_official_list_has_249_uppercase_codes() -> None:
    assert len(COUNTRY_CODES) == 249
    assert all(re.fullmatch(r"[A-Z]{2}", code) for code in COUNTRY_CODES)


@pytest.mark.parametrize("code", ["FR", "US", "GB", "JP", "SS", "BQ", "CW", "AQ", "BV", "AX"])
def test_assigned_codes(code: str) -> None:
    assert is_country(code)


@pytest.mark.parametrize("code", ["UK", "EU", "XK", "ZZ", "AA", "QM", "XX", "AN", "fr", "", None])
def test_reserved_user_assigned_withdrawn_and_non_canonical_are_not_countries(
    code: str | None,
) -> None:
    assert not is_country(code)
