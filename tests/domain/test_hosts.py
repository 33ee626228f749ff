from __future__ import annotations

import pytest

from domain.errors import BadUserInput
from domain.hosts import (
    DOMAIN_MAX_LENGTH,
    LABEL_MAX_LENGTH,
    WEBHOOK_URL_MAX_LENGTH,
    public_address_problem,
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


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8: still reaches whatever the gateway maps
        "64:ff9b:1::a00:1",  # local-use NAT64
        "2002:7f00:1::1",  # 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
        "2002:808:808::1",  # 6to4 of 8.8.8.8
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "::7f00:1",  # IPv4-compatible 127.0.0.1
        "ff02::1",
        "ff0e::1",
        "224.0.0.1",
        "239.255.255.250",
        "::ffff:127.0.0.1",
        "::ffff:224.0.0.1",
        "127.0.0.1",
        "10.1.2.3",
        "169.254.169.254",
        "fe80::1%eth0",
        "fc00::1",
    ],
)
def test_addresses_a_webhook_must_not_reach(address: str) -> None:
    assert public_address_problem(address) is not None


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "93.184.216.34"]
)
def test_public_unicast_addresses(address: str) -> None:
    assert public_address_problem(address) is None
