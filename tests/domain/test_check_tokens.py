"""The verification page's record token: bound to code, client and time."""

from __future__ import annotations

from domain.check_tokens import (
    CHECK_TOKEN_TTL_SECONDS,
    check_token_key,
    mint_check_token,
    valid_check_token,
)

KEY = check_token_key(b"salt" * 8)
NOW = 1_800_000_000.0


def test_a_token_holds_for_its_code_client_and_time_only() -> None:
    token = mint_check_token(KEY, "ABCD-EFGH-JKMN", "192.0.2.1", NOW)
    assert valid_check_token(KEY, token, "ABCD-EFGH-JKMN", "192.0.2.1", NOW + 5)
    assert valid_check_token(
        KEY, token, "ABCD-EFGH-JKMN", "192.0.2.1", NOW + CHECK_TOKEN_TTL_SECONDS
    )
    assert not valid_check_token(KEY, token, "ABCD-EFGH-JKMM", "192.0.2.1", NOW)
    assert not valid_check_token(KEY, token, "ABCD-EFGH-JKMN", "192.0.2.2", NOW)
    assert not valid_check_token(KEY, token, "ABCD-EFGH-JKMN", None, NOW)
    late = NOW + CHECK_TOKEN_TTL_SECONDS + 1
    assert not valid_check_token(KEY, token, "ABCD-EFGH-JKMN", "192.0.2.1", late)
    other = check_token_key(b"pepper" * 6)
    assert not valid_check_token(other, token, "ABCD-EFGH-JKMN", "192.0.2.1", NOW)


def test_malformed_tokens_are_refused_not_raised() -> None:
    for token in ("", ".", "zz.abc", "1.", "." + "A" * 22, "1" * 13 + ".AAAA", "6b49d200.AAAA"):
        assert not valid_check_token(KEY, token, "ABCD-EFGH-JKMN", "192.0.2.1", NOW)
