from __future__ import annotations

import pytest

from domain.errors import BadUserInput
from domain.hosts import (
    DOMAIN_MAX_LENGTH,
    LABEL_MAX_LENGTH,
    WEBHOOK_URL_MAX_LENGTH,
    validate_domain,
    validate_webhook_url,
)


def _domain(length: int) -> str:
    """A valid domain of exactly ``length`` characters, labels of 63."""
    labels = []
    remaining = length - 4  # ".com"
    while remaining > 0:
        size = min(LABEL_MAX_LENGTH, remaining)
        labels.append("a" * size)
        remaining -= size + 1
    name = ".".join(labels) + ".com"
    return name if len(name) == length else "b" + name


@pytest.mark.parametrize(
    ("value", "domain"),
    [
        ("example.com", "example.com"),
        ("Shop.Example.CO.UK", "shop.example.co.uk"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("a-b.c9", "a-b.c9"),
        ("1password.com", "1password.com"),
    ],
)
def test_domains(value: str, domain: str) -> None:
    assert validate_domain(value) == domain


@pytest.mark.parametrize(
    "value",
    [
        "localhost",
        "example..com",
        "-example.com",
        "example-.com",
        "ex_ample.com",
        "1.2.3.4",
        "bücher.de",
        "https://example.com",
        "example.com/path",
        "example.com.",
        "",
        "exa mple.com",
    ],
)
def test_invalid_domains(value: str) -> None:
    with pytest.raises(BadUserInput, match=r"^domain: .* is not a domain name") as info:
        validate_domain(value)
    assert info.value.hint


def test_domain_length_boundaries() -> None:
    label = "a" * LABEL_MAX_LENGTH
    assert validate_domain(f"{label}.com") == f"{label}.com"
    with pytest.raises(BadUserInput, match="label longer than 63"):
        validate_domain(f"a{label}.com")
    longest = _domain(DOMAIN_MAX_LENGTH)
    assert len(longest) == DOMAIN_MAX_LENGTH
    assert validate_domain(longest) == longest
    with pytest.raises(BadUserInput, match="longer than 253"):
        validate_domain("c" + longest)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/hook",
        "http://127.0.0.1:8080/hooks/threats?x=1",
        "http://[::1]:9000/",
        "http://localhost/hook",
        "HTTPS://Hooks.Example.com/A",
        "https://example.com:443/#frag",
    ],
)
def test_webhook_urls_are_kept_as_sent(url: str) -> None:
    assert validate_webhook_url(url) == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("/hook", "scheme"),
        ("example.com/hook", "scheme"),
        ("https:///hook", "no host"),
        ("https://user@example.com/", "credentials"),
        ("https://user:pw@example.com/", "credentials"),
        ("https://:pw@example.com/", "credentials"),
        ("http://example.com:99999/", "not a valid URL"),
        ("http://example.com:0/", "port 0"),
        ("http://exa mple.com/", "whitespace"),
        ("http://example.com/\n", "whitespace"),
        ("http://ex_ample.com/", "host"),
        ("http://bücher.de/", "host"),
        ("http://[::1/", "not a valid URL"),
    ],
)
def test_invalid_webhook_urls(url: str, reason: str) -> None:
    with pytest.raises(BadUserInput, match=f"^url: .*{reason}") as info:
        validate_webhook_url(url)
    assert info.value.hint


def test_webhook_url_length_boundary() -> None:
    prefix = "https://example.com/"
    longest = prefix + "a" * (WEBHOOK_URL_MAX_LENGTH - len(prefix))
    assert validate_webhook_url(longest) == longest
    with pytest.raises(BadUserInput, match="longer than 2048"):
        validate_webhook_url(longest + "a")


def test_require_https() -> None:
    assert validate_webhook_url("https://example.com/", require_https=True)
    with pytest.raises(BadUserInput, match="must use https"):
        validate_webhook_url("http://example.com/", require_https=True)
