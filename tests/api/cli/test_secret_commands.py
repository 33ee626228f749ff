"""``proofgate init-secrets``, and a DynamoDB deployment that refuses to start
without the secrets its processes share."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import uuid
from pathlib import Path

import pytest
from _live import VERIFY, Gateway

from api.cli.main import main
from api.cli.secrets import init_secrets
from api.settings.gateway import Backend, Settings
from api.settings.keyfile import SHARED_SECRETS
from domain.errors import ConfigurationError
from storage.dynamodb import create_table

REGION = "us-east-1"
PAGE = """query($id: ID!, $after: String) {
    brand(id: $id) { products(first: 1, after: $after) {
        edges { node { name } } pageInfo { hasNextPage endCursor } } }
}"""


def test_init_secrets_writes_private_files_and_prints_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init-secrets", str(tmp_path / "fleet")]) == 0
    printed = capsys.readouterr().out.splitlines()
    environment = dict(line.split("=", 1) for line in printed if not line.startswith("#"))
    assert set(environment) == {
        "PROOFGATE_CURSOR_KEY",
        "PROOFGATE_HASH_SALT",
        "PROOFGATE_ADMIN_KEY",
        "PROOFGATE_SIGNING_KEY_FILE",
    }
    for secret in SHARED_SECRETS:
        path = tmp_path / "fleet" / secret.file_name
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert environment["PROOFGATE_SIGNING_KEY_FILE"] == str(tmp_path / "fleet" / "signing.key")
    assert init_secrets(tmp_path / "fleet") == environment, "a second run keeps every secret"
    settings = Settings.from_env({"PROOFGATE_BACKEND": "dynamodb", **environment})
    assert settings.admin_key == environment["PROOFGATE_ADMIN_KEY"]


def test_dynamodb_without_shared_secrets_refuses_to_start_and_writes_nothing(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    environ = {"PROOFGATE_BACKEND": "dynamodb", "PROOFGATE_DATA_DIR": str(data_dir)}
    with pytest.raises(ConfigurationError) as refused:
        Settings.from_env({**environ, "PROOFGATE_ADMIN_KEY": "x" * 20})
    assert refused.value.message.endswith(
        "missing: PROOFGATE_CURSOR_KEY, PROOFGATE_HASH_SALT, PROOFGATE_SIGNING_KEY"
    )
    assert "init-secrets" in (refused.value.hint or "")
    assert not data_dir.exists()
    init_secrets(data_dir)
    assert Settings.from_env(environ).backend is Backend.DYNAMODB


def test_the_embedded_store_still_generates_its_secrets(tmp_path: Path) -> None:
    settings = Settings.from_env({"PROOFGATE_DATA_DIR": str(tmp_path)})
    assert (tmp_path / "admin.key").read_text().strip() == settings.admin_key


async def test_two_processes_with_init_secrets_agree_on_certificates_and_cursors(
    tmp_path: Path, moto_endpoint: str
) -> None:
    table = f"fleet-{uuid.uuid4().hex[:8]}"
    await create_table(table_name=table, region=REGION, endpoint_url=moto_endpoint)
    environment = init_secrets(tmp_path / "secrets")
    shared = {
        **environment,
        "PROOFGATE_BACKEND": "dynamodb",
        "PROOFGATE_TABLE": table,
        "PROOFGATE_DYNAMODB_ENDPOINT": moto_endpoint,
        "PROOFGATE_AWS_REGION": REGION,
    }
    admin = environment["PROOFGATE_ADMIN_KEY"]
    a = await Gateway(tmp_path / "a", **shared).start()
    b = await Gateway(tmp_path / "b", **shared).start()
    try:
        created = await a.data(
            "mutation($input: RegisterBrandInput!) { registerBrand(input: $input) "
            "{ apiKey brand { id } } }",
            {"input": {"name": "Fleet", "domain": "fleet.example.com"}},
            admin,
        )
        brand_id = created["registerBrand"]["brand"]["id"]
        key = created["registerBrand"]["apiKey"]
        first = await a.product(brand_id, key)
        await a.product(brand_id, key)
        verified = await b.data(VERIFY, {"code": first["verificationCode"]})
        assert verified["verifyProduct"]["result"] == "AUTHENTIC"
        page = await a.data(PAGE, {"id": brand_id}, key)
        cursor = page["brand"]["products"]["pageInfo"]["endCursor"]
        following = await b.data(PAGE, {"id": brand_id, "after": cursor}, key)
        assert len(following["brand"]["products"]["edges"]) == 1
    finally:
        await a.stop()
        await b.stop()


def test_without_the_shared_secrets_serve_exits_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for secret in SHARED_SECRETS:
        for variable in (secret.variable, *secret.alternatives):
            monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PROOFGATE_BACKEND", "dynamodb")
    assert main(["serve", "--data-dir", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    error, hint = captured.err.splitlines()
    assert error.startswith("proofgate: error: PROOFGATE_BACKEND=dynamodb needs the secrets")
    assert hint.startswith("proofgate: hint: Run `proofgate init-secrets DIR`")


def git_status(repository: Path) -> str:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    run = [git, "-C", str(repository)]
    return subprocess.run(
        [*run, "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_secrets_inside_a_git_work_tree_are_ignored(tmp_path: Path) -> None:
    """``git add -A`` would commit them; the folder ignores itself instead."""
    repository = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    (repository / "tracked.txt").write_text("the positive control: git sees new files\n")
    init_secrets(repository / ".fleet")
    assert git_status(repository).splitlines() == ["?? tracked.txt"]
    assert (repository / ".fleet" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_secrets_outside_git_get_no_gitignore(tmp_path: Path) -> None:
    init_secrets(tmp_path / "fleet")
    assert not (tmp_path / "fleet" / ".gitignore").exists()


def test_json_is_one_secret_of_a_secrets_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The variables a process reads, the signing key as its PEM: what
    deploy/service.yaml injects from Secrets Manager."""
    assert main(["init-secrets", str(tmp_path / "fleet"), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {secret.variable for secret in SHARED_SECRETS}
    assert document["PROOFGATE_SIGNING_KEY"].startswith("-----BEGIN PRIVATE KEY-----")
    settings = Settings.from_env({"PROOFGATE_BACKEND": "dynamodb", **document})
    assert settings.backend is Backend.DYNAMODB
    assert settings.admin_key == document["PROOFGATE_ADMIN_KEY"]
