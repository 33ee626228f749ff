"""Building the services: signing keys and the hashing salt (from the
environment, a named file, or generated once into the data directory), and the
pipeline's committing storage."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from api.runtime.pipeline import build_pipeline
from api.runtime.resolver_services import build_services, load_hash_salt, load_key_ring
from api.settings.gateway import HASH_SALT_FILE, SIGNING_KEY_FILE, Settings
from domain.errors import ConfigurationError
from domain.signing import SigningKey
from services.pipeline.events import RecallEvent
from storage import Item
from storage.sqlite import open_sqlite

ADMIN = "services-test-admin-key"
KEY_32 = base64.urlsafe_b64encode(bytes(range(32))).decode()


def env(data_dir: Path, **values: str) -> dict[str, str]:
    return {
        "PROOFGATE_DATA_DIR": str(data_dir),
        "PROOFGATE_ADMIN_KEY": ADMIN,
        "PROOFGATE_CURSOR_KEY": KEY_32,
        **values,
    }


def test_signing_key_from_the_environment(tmp_path: Path) -> None:
    key = SigningKey.generate()
    escaped = key.private_key_pem().decode().replace("\n", "\\n")
    settings = Settings.from_env(env(tmp_path / "data", PROOFGATE_SIGNING_KEY=escaped))
    assert settings.signing_key_file is None
    assert load_key_ring(settings).active.kid == key.kid
    assert not (tmp_path / "data").exists()
    assert key.private_key_pem().decode() not in repr(settings)


def test_signing_key_from_a_named_file(tmp_path: Path) -> None:
    key = SigningKey.generate()
    path = tmp_path / "mounted.pem"
    path.write_bytes(key.private_key_pem())
    settings = Settings.from_env(env(tmp_path / "data", PROOFGATE_SIGNING_KEY_FILE=str(path)))
    assert load_key_ring(settings).active.kid == key.kid


@pytest.mark.parametrize(
    ("values", "variable"),
    [
        ({"PROOFGATE_SIGNING_KEY": "not a pem"}, "PROOFGATE_SIGNING_KEY"),
        ({"PROOFGATE_SIGNING_KEY_FILE": "/nonexistent/key.pem"}, "PROOFGATE_SIGNING_KEY_FILE"),
        (
            {"PROOFGATE_SIGNING_KEY": "x", "PROOFGATE_SIGNING_KEY_FILE": "/x"},
            "PROOFGATE_SIGNING_KEY",
        ),
        (
            {"PROOFGATE_VERIFYING_KEYS_FILE": "/nonexistent/keys.pem"},
            "PROOFGATE_VERIFYING_KEYS_FILE",
        ),
        ({"PROOFGATE_HASH_SALT": "c2hvcnQ"}, "PROOFGATE_HASH_SALT"),
        ({"PROOFGATE_HASH_SALT": "not base64!"}, "PROOFGATE_HASH_SALT"),
    ],
)
def test_bad_values_stop_start_up_and_write_nothing(
    tmp_path: Path, values: dict[str, str], variable: str
) -> None:
    with pytest.raises(ConfigurationError, match=variable):
        Settings.from_env(env(tmp_path / "data", **values))
    assert not (tmp_path / "data").exists()


def test_an_rsa_key_is_refused(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    pem = (
        rsa.generate_private_key(public_exponent=65537, key_size=1024)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )
    with pytest.raises(ConfigurationError, match="Ed25519"):
        Settings.from_env(env(tmp_path, PROOFGATE_SIGNING_KEY=pem))


def test_embedded_default_generates_the_key_once(tmp_path: Path) -> None:
    settings = Settings.from_env(env(tmp_path))
    assert settings.signing_key is None
    assert settings.signing_key_file == tmp_path / SIGNING_KEY_FILE
    assert not settings.signing_key_file.exists()
    first = load_key_ring(settings).active.kid
    assert stat.S_IMODE(os.stat(settings.signing_key_file).st_mode) == 0o600
    assert load_key_ring(Settings.from_env(env(tmp_path))).active.kid == first


def test_retired_keys_stay_verifiable(tmp_path: Path) -> None:
    active, old, older = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    bundle = tmp_path / "retired.pem"
    bundle.write_text(old.public_key_pem + "\n" + older.public_key_pem)
    settings = Settings.from_env(
        env(
            tmp_path,
            PROOFGATE_SIGNING_KEY=active.private_key_pem().decode(),
            PROOFGATE_VERIFYING_KEYS_FILE=str(bundle),
        )
    )
    ring = load_key_ring(settings)
    assert ring.active.kid == active.kid
    assert set(ring.keys) == {active.kid, old.kid, older.kid}
    assert ring.published()[0].kid == active.kid


def test_hash_salt_from_environment_and_from_the_data_directory(tmp_path: Path) -> None:
    salt = base64.urlsafe_b64encode(bytes(range(20))).decode().rstrip("=")
    assert load_hash_salt(
        Settings.from_env(env(tmp_path / "a", PROOFGATE_HASH_SALT=salt))
    ) == bytes(range(20))
    settings = Settings.from_env(env(tmp_path / "b"))
    assert settings.hash_salt_file == tmp_path / "b" / HASH_SALT_FILE
    generated = load_hash_salt(settings)
    assert len(generated) == 32
    assert load_hash_salt(Settings.from_env(env(tmp_path / "b"))) == generated


def test_corrupt_salt_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / HASH_SALT_FILE).write_text("!!!\n")
    with pytest.raises(ConfigurationError, match=HASH_SALT_FILE):
        load_hash_salt(Settings.from_env(env(tmp_path)))


def test_services_hash_the_admin_key(tmp_path: Path) -> None:
    settings = Settings(cursor_key=bytes(32), admin_key=ADMIN, hash_salt=bytes(16))
    services = build_services(settings, storage=object())  # type: ignore[arg-type]
    assert services.admin_key_hash == hashlib.sha256(ADMIN.encode()).hexdigest()
    assert services.hash_salt == bytes(16)
    assert services.key_ring.active.kid != load_key_ring(settings).active.kid


async def test_services_built_with_a_pipeline_wake_its_relay_when_an_outbox_item_commits() -> None:
    settings = Settings(cursor_key=bytes(32), admin_key=ADMIN, hash_salt=bytes(16))
    storage = await open_sqlite(":memory:", cursor_key=bytes(32))
    try:
        pipeline = build_pipeline(settings, storage)
        woken: list[Item] = []
        pipeline.relay.expect = woken.append  # type: ignore[method-assign]
        services = build_services(settings, storage, pipeline)
        assert services.pipeline is pipeline
        event = RecallEvent("P", "B", datetime(2030, 1, 1, tzinfo=UTC), "reason")
        actions = services.enqueue(event)
        await services.storage.transact_write(actions)
        assert [item["id"] for item in woken] == ["recall:P"]
    finally:
        await storage.close()
