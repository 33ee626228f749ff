"""Every process records its signing key in the store it serves; one whose
ring lacks a key another process recorded says so loudly at start-up, and
``signingKeys`` lists the store's keys. Both backends, processes as apps
over one store."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _asgi import GraphQLClient, running

from api.app import create_app
from api.settings.gateway import Backend, Settings
from domain.signing import SigningKey
from storage.dynamodb import create_table

REGION = "us-east-1"
ADMIN = "key-record-admin-key"
SIGNING_KEYS = "{ signingKeys { keyId active publicKeyPem } }"
Make = Callable[..., Settings]


@pytest.fixture(params=("sqlite", "dynamodb"))
async def make(request: pytest.FixtureRequest, tmp_path: Path) -> Make:
    common: dict[str, Any] = {
        "cursor_key": bytes(32),
        "admin_key": ADMIN,
        "hash_salt": bytes(16),
    }
    if request.param == "sqlite":
        common["sqlite_path"] = str(tmp_path / "shared.db")
    else:
        endpoint: str = request.getfixturevalue("moto_endpoint")
        table = f"keys-{uuid.uuid4().hex[:8]}"
        await create_table(table_name=table, region=REGION, endpoint_url=endpoint)
        common |= {
            "backend": Backend.DYNAMODB,
            "table": table,
            "dynamodb_endpoint": endpoint,
            "aws_region": REGION,
        }

    def settings(key: SigningKey, *verifying: SigningKey) -> Settings:
        return Settings(
            signing_key=key.private_key_pem().decode(),
            verifying_keys=tuple(k.public_key_pem for k in verifying),
            **common,
        )

    return settings


async def start(settings: Settings, caplog: pytest.LogCaptureFixture) -> tuple[list[Any], str]:
    """The process's ``signingKeys`` and what it logged at start-up."""
    caplog.clear()
    app = create_app(settings)
    with caplog.at_level(logging.WARNING, logger="proofgate.api"):
        async with running(app) as http:
            started = caplog.text
            keys = (await GraphQLClient(app, http).data(SIGNING_KEYS))["signingKeys"]
    return [(k["keyId"], k["active"]) for k in keys], started


async def test_a_process_with_a_key_of_its_own_says_so_loudly(
    make: Make, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = SigningKey.generate(), SigningKey.generate()

    keys, logged = await start(make(first), caplog)
    assert keys == [(first.kid, True)]
    assert "cannot verify" not in logged and "new to a store" not in logged

    keys, logged = await start(make(second), caplog)
    assert keys == [(second.kid, True), (first.kid, False)], "the store's keys are listed"
    assert f"cannot verify certificates signed by key(s) {first.kid}" in logged
    assert "COUNTERFEIT" in logged and "PROOFGATE_VERIFYING_KEYS_FILE" in logged
    assert f"signs with key {second.kid}, new to a store whose processes use {first.kid}" in (
        logged
    )

    keys, logged = await start(make(first), caplog)
    assert keys == [(first.kid, True), (second.kid, False)]
    assert f"cannot verify certificates signed by key(s) {second.kid}" in logged
    assert "new to a store" not in logged, "its own key was recorded before"

    keys, logged = await start(make(first, second), caplog)
    assert keys == [(first.kid, True), (second.kid, False)]
    assert "cannot verify" not in logged, "a process holding every key is quiet"


async def test_processes_sharing_one_key_agree_quietly(
    make: Make, caplog: pytest.LogCaptureFixture
) -> None:
    shared = SigningKey.generate()
    for _ in range(2):
        keys, logged = await start(make(shared), caplog)
        assert keys == [(shared.kid, True)]
        assert "cannot verify" not in logged and "new to a store" not in logged
