"""GTINs, AI 10/21 values and Digital Link paths (domain/gs1.py), against
examples from the GS1 General Specifications and Digital Link standard."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.gs1 import (
    DigitalLink,
    DigitalLinkError,
    check_digit,
    digital_link_path,
    normalise_gtin,
    parse_digital_link,
    validate_qualifier,
)

CSET_82 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!\"%&'()*+,-./:;<=>?_"


@pytest.mark.parametrize(
    ("text", "gtin14"),
    [
        ("9506000134352", "09506000134352"),  # the Digital Link standard's example
        ("09506000134352", "09506000134352"),
        ("036000291452", "00036000291452"),
        ("96385074", "00000096385074"),
        ("10614141000415", "10614141000415"),
    ],
)
def test_gtins_of_every_length_become_gtin_14(text: str, gtin14: str) -> None:
    assert normalise_gtin(text) == gtin14


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("09506000134353", "check digit 3, but its digits give 2"),
        ("950600013435", "check digit"),
        ("123", "8, 12, 13 or 14 digits"),
        ("0950600013435X", "8, 12, 13 or 14 digits"),
        ("\uff10" * 8, "8, 12, 13 or 14 digits"),
    ],
)
def test_a_bad_gtin_says_why(text: str, reason: str) -> None:
    with pytest.raises(DigitalLinkError, match=reason):
        normalise_gtin(text)


def test_the_check_digit_is_the_gs1_mod_10() -> None:
    assert check_digit("950600013435") == 2
    assert check_digit("1061414100041") == 5


def test_qualifiers_hold_character_set_82_up_to_20() -> None:
    assert validate_qualifier("ABC/12%-x", "21") == "ABC/12%-x"
    assert validate_qualifier("x" * 20, "10") == "x" * 20
    for bad, reason in (("", "1 to 20"), ("x" * 21, "1 to 20"), ("a b", "' '"), ("é", "'é'")):
        with pytest.raises(DigitalLinkError, match=reason):
            validate_qualifier(bad, "21")


@pytest.mark.parametrize(
    ("path", "link"),
    [
        ("/01/09506000134352/21/12345", DigitalLink("09506000134352", "12345")),
        ("/01/9506000134352/10/LOT1/21/S1", DigitalLink("09506000134352", "S1", "LOT1")),
        ("/01/09506000134352/21/A%2FB%25C", DigitalLink("09506000134352", "A/B%C")),
        ("/01/09506000134352", DigitalLink("09506000134352")),
        ("/01/09506000134352/21/12345/", DigitalLink("09506000134352", "12345")),
    ],
)
def test_paths_parse(path: str, link: DigitalLink) -> None:
    assert parse_digital_link(path) == link


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/01/09506000134353/21/1", "check digit"),
        ("/01/09506000134352/99/1", "AI '99' is not a key qualifier"),
        ("/01/09506000134352/21/1/10/L", "AI 10 .* must come before AI 21"),
        ("/01/09506000134352/21/1/21/2", "appears twice"),
        ("/01/09506000134352/21", "has no value"),
        ("/01/09506000134352/22/V/21/1", "AI 22"),
        ("/414/9506000134352", "starts with /01/"),
        ("/01/09506000134352/21/a%20b", "character set 82"),
        ("/01/09506000134352/21/" + "x" * 21, "1 to 20"),
    ],
)
def test_malformed_paths_say_why(path: str, reason: str) -> None:
    with pytest.raises(DigitalLinkError, match=reason):
        parse_digital_link(path)


@given(
    st.text(CSET_82, min_size=1, max_size=20),
    st.none() | st.text(CSET_82, min_size=1, max_size=20),
)
def test_a_built_path_parses_back(serial: str, lot: str | None) -> None:
    path = digital_link_path("09506000134352", serial, lot)
    assert parse_digital_link(path) == DigitalLink("09506000134352", serial, lot)
