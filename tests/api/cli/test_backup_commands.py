"""``proofgate backup`` while the gateway serves and writes, then the restore
procedure of docs/operations.md, ending with ``proofgate reconcile`` OK."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from _asgi import ADMIN_KEY, serving

from api.cli.main import main
from api.cli.secrets import init_secrets

REGISTER = """mutation($domain: String!) {
    registerBrand(input: {name: "Acme", domain: $domain, plan: FREE}) { brand { id } }
}"""
PRODUCT = """mutation($b: ID!, $name: String!) {
    registerProduct(input: {brandId: $b, name: $name}) { id }
}"""
KEY_FILES = ("cursor.key", "admin.key", "hash.salt", "signing.key")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("PROOFGATE_"):
            monkeypatch.delenv(name)
    return tmp_path / "data"


def products_in(database: Path) -> int:
    with sqlite3.connect(database) as connection:
        (count,) = connection.execute(
            "SELECT count(*) FROM items WHERE pk >= 'PRODUCT#' AND pk < 'PRODUCT$' AND sk = 'META'"
        ).fetchone()
    return int(count)


async def test_a_backup_taken_while_serving_restores_and_reconciles(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup = tmp_path / "backup.db"
    database = data_dir / "proofgate.db"
    async with serving(
        data_dir, PROOFGATE_SQLITE_PATH=str(database), PROOFGATE_FREE_PLAN_CREDITS="100"
    ) as client:
        created = await client.data(REGISTER, {"domain": "acme.example.com"}, key=ADMIN_KEY)
        brand_id = created["registerBrand"]["brand"]["id"]
        for n in range(5):
            await client.data(PRODUCT, {"b": brand_id, "name": f"before {n}"}, key=ADMIN_KEY)
        writing = asyncio.gather(
            *(
                client.data(PRODUCT, {"b": brand_id, "name": f"during {n}"}, key=ADMIN_KEY)
                for n in range(20)
            )
        )
        await asyncio.sleep(0)
        command = ["backup", str(backup), "--data-dir", str(data_dir)]
        assert await asyncio.to_thread(main, command) == 0
        await writing
    assert f"to {backup}" in capsys.readouterr().out
    assert not (tmp_path / "backup.db.partial").exists()

    restored = tmp_path / "restored"
    restored.mkdir()
    shutil.copy(backup, restored / "proofgate.db")
    assert (data_dir / "signing.key").is_file(), "certificates verify only with their key"
    for name in KEY_FILES:
        if (data_dir / name).is_file():
            shutil.copy(data_dir / name, restored / name)
    assert await asyncio.to_thread(main, ["reconcile", "--data-dir", str(restored)]) == 0
    assert "OK" in capsys.readouterr().out
    assert 5 <= products_in(restored / "proofgate.db") <= 25


def test_backup_never_overwrites_and_names_a_missing_store(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["backup", str(tmp_path / "copy.db"), "--data-dir", str(data_dir)]) == 1
    assert f"No SQLite store at {data_dir / 'proofgate.db'}" in capsys.readouterr().err
    data_dir.mkdir(exist_ok=True)
    sqlite3.connect(data_dir / "proofgate.db").close()
    taken = tmp_path / "taken.db"
    taken.write_bytes(b"keep me")
    assert main(["backup", str(taken), "--data-dir", str(data_dir)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert taken.read_bytes() == b"keep me"


def test_backup_on_dynamodb_points_to_pitr(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:

    for name, value in init_secrets(tmp_path / "fleet").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PROOFGATE_BACKEND", "dynamodb")
    assert main(["backup", str(tmp_path / "copy.db")]) == 1
    error, hint = capsys.readouterr().err.splitlines()
    assert "DynamoDB keeps its own backups" in error and "point-in-time recovery" in hint
    assert not (tmp_path / "copy.db").exists()


def test_a_backup_is_as_private_as_the_key_files(data_dir: Path, tmp_path: Path) -> None:
    assert main(["migrate", "--create", "--data-dir", str(data_dir)]) == 0
    copy = tmp_path / "copy.db"
    assert main(["backup", str(copy), "--data-dir", str(data_dir)]) == 0
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
