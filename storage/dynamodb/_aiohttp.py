"""The one door to aiohttp's undocumented internals.

The data plane sends on a pooled ``aiohttp.ClientSession`` without
``trust_env``, which would read the proxy environment on a thread for every
request; it reads HTTPS_PROXY/NO_PROXY once instead, with aiohttp's own
(undocumented) ``aiohttp.helpers.get_env_proxy_for_url``, so the proxy it uses
is the one ``trust_env`` would have chosen (docs/design.md, DynamoDB data plane).

Checked against aiohttp 3.14.5.
"""

from __future__ import annotations

from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

__all__ = ["environment_proxy"]


def environment_proxy(url: str) -> str | None:
    """HTTPS_PROXY/NO_PROXY for ``url`` as aiohttp's ``trust_env`` reads them."""
    try:
        proxy, _ = get_env_proxy_for_url(URL(url))
    except LookupError:
        return None
    return str(proxy)
