"""The official Standard Webhooks verifiers, Python's and JavaScript's, as a
receiver runs them on a delivery the gateway sent.

JavaScript's runs in Node from ``tests/clients/webhooks`` (``npm ci`` against
its lock on first use); without Node the tests that need it skip, saying so.
"""

from __future__ import annotations

import base64
import fcntl
import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

__all__ = ["Delivery", "node_verifier", "python_verifies"]

CLIENTS = Path(__file__).resolve().parents[1] / "clients" / "webhooks"


@dataclass(frozen=True)
class Delivery:
    secret: str
    headers: Mapping[str, str]
    body: bytes


def python_verifies(delivery: Delivery) -> str | None:
    """None if PyPI ``standardwebhooks`` accepts the delivery, else why not."""
    try:
        Webhook(delivery.secret).verify(delivery.body, dict(delivery.headers))
    except WebhookVerificationError as refused:
        return str(refused)
    return None


def node_verifier() -> NodeVerifier:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the JS verifier (apt-get install nodejs npm)")
    with (CLIENTS / "package.json").open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (CLIENTS / "node_modules" / ".package-lock.json").exists():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=CLIENTS,
                capture_output=True,
                text=True,
                timeout=300,
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci failed in {CLIENTS}: {done.stderr[-2000:]}")
    return NodeVerifier(node)


class NodeVerifier:
    def __init__(self, node: str) -> None:
        self.node = node

    def verify(self, deliveries: Sequence[Delivery]) -> list[str | None]:
        """Per delivery, None if npm ``standardwebhooks`` accepts it, else why not."""
        cases = [
            {
                "secret": d.secret,
                "headers": dict(d.headers),
                "body": base64.b64encode(d.body).decode(),
            }
            for d in deliveries
        ]
        done = subprocess.run(
            [self.node, str(CLIENTS / "verify.mjs")],
            input=json.dumps(cases),
            cwd=CLIENTS,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        results: list[str | None] = json.loads(done.stdout)
        return results
