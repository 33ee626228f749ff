"""Accept-Language negotiation, and the verification page's languages."""

from __future__ import annotations

import pytest

from api.http.languages import negotiate_language
from api.http.verify_text import LANGUAGES, TEXT

SUPPORTED = ("en", "fr")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, "en"),
        ("", "en"),
        ("fr", "fr"),
        ("fr-CA,fr;q=0.9,en;q=0.8", "fr"),
        ("de-DE,de;q=0.9,fr;q=0.3,en;q=0.2", "fr"),
        ("en;q=0.5, fr;q=0.6", "fr"),
        ("fr;q=0, en;q=0.1", "en"),
        ("de", "en"),
        ("*", "en"),
        ("FR-be", "fr"),
        ("fr;q=nonsense, en;q=0.2", "en"),
        ("fr;q=7", "en"),
        ("de," * 40 + "fr", "en"),
    ],
)
def test_the_best_weighted_language_we_have(header: str | None, expected: str) -> None:
    assert negotiate_language(header, SUPPORTED) == expected


def test_every_language_has_every_word_of_the_default() -> None:
    reference = TEXT[LANGUAGES[0]]
    for language in LANGUAGES:
        assert set(TEXT[language]) == set(reference), language
        for key, words in TEXT[language].items():
            assert words.count("{") == reference[key].count("{"), (language, key)
