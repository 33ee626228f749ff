from __future__ import annotations

import pytest

from domain.labels import QrFormat, qr_url, verify_url


@pytest.mark.parametrize("base", ["https://verify.example.com", "https://verify.example.com/"])
def test_label_urls_join_the_public_url_with_one_slash(base: str) -> None:
    assert verify_url(base, "ABCD-EFGH-JKMN") == "https://verify.example.com/verify/ABCD-EFGH-JKMN"
    assert qr_url(base, "ABCD-EFGH-JKMN") == "https://verify.example.com/qr/ABCD-EFGH-JKMN.png"
    assert qr_url(base, "ABCD-EFGH-JKMN", QrFormat.SVG).endswith("/qr/ABCD-EFGH-JKMN.svg")


def test_a_public_url_with_a_path_keeps_it() -> None:
    assert verify_url("https://example.com/pg", "X") == "https://example.com/pg/verify/X"
