from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest

from api.cli.secrets import init_secrets
from api.settings.gateway import ADMIN_KEY_FILE, CURSOR_KEY_FILE, Backend, Settings, TableLocation
from api.settings.keyfile import read_or_create
from domain.errors import ConfigurationError

KEY_32 = base64.urlsafe_b64encode(bytes(range(32))).decode()
ADMIN = "a-long-enough-admin-key"


def env(data_dir: Path, **values: str) -> dict[str, str]:
    return {"PROOFGATE_DATA_DIR": str(data_dir), **values}


def test_defaults(tmp_path: Path) -> None:
    settings = Settings.from_env(env(tmp_path))
    assert settings.backend is Backend.SQLITE
    assert settings.data_dir == tmp_path
    assert settings.sqlite_path == str(tmp_path / "proofgate.db")
    assert settings.table == "proofgate"
    assert settings.dynamodb_endpoint is None
    assert settings.aws_region == "us-east-1"
    assert settings.cors_origins == ()
    assert (settings.host, settings.port) == ("127.0.0.1", 8000)
    assert settings.demo is False
    assert settings.url == "http://127.0.0.1:8000"


def test_default_data_dir_is_relative_dot_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env({})
    assert settings.data_dir == Path(".data")
    assert settings.sqlite_path == str(Path(".data") / "proofgate.db")
    assert (tmp_path / ".data" / CURSOR_KEY_FILE).is_file()


def test_generated_keys_are_private_and_persist(tmp_path: Path) -> None:
    first = Settings.from_env(env(tmp_path))
    second = Settings.from_env(env(tmp_path))
    assert len(first.cursor_key) == 32
    assert len(first.admin_key) >= 32
    assert (second.cursor_key, second.admin_key) == (first.cursor_key, first.admin_key)
    assert first.admin_key_file == tmp_path / ADMIN_KEY_FILE
    for name in (CURSOR_KEY_FILE, ADMIN_KEY_FILE):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600


def test_another_data_dir_gets_other_keys(tmp_path: Path) -> None:
    one = Settings.from_env(env(tmp_path / "one"))
    two = Settings.from_env(env(tmp_path / "two"))
    assert one.cursor_key != two.cursor_key
    assert one.admin_key != two.admin_key


def test_keys_from_environment_touch_no_files(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    settings = Settings.from_env(
        env(
            data_dir,
            PROOFGATE_CURSOR_KEY=KEY_32,
            PROOFGATE_ADMIN_KEY=ADMIN,
            PROOFGATE_SQLITE_PATH=":memory:",
        )
    )
    assert settings.cursor_key == bytes(range(32))
    assert settings.admin_key == ADMIN
    assert settings.admin_key_file is None
    assert settings.sqlite_path == ":memory:"
    assert not data_dir.exists()


@pytest.mark.parametrize(
    ("variable", "value", "attribute", "expected"),
    [
        ("PROOFGATE_BACKEND", "dynamodb", "backend", Backend.DYNAMODB),
        ("PROOFGATE_BACKEND", " SQLite ", "backend", Backend.SQLITE),
        ("PROOFGATE_SQLITE_PATH", "/srv/pg.db", "sqlite_path", "/srv/pg.db"),
        ("PROOFGATE_TABLE", "prod.proofgate-v2", "table", "prod.proofgate-v2"),
        (
            "PROOFGATE_DYNAMODB_ENDPOINT",
            "http://127.0.0.1:5000",
            "dynamodb_endpoint",
            "http://127.0.0.1:5000",
        ),
        ("PROOFGATE_AWS_REGION", "eu-west-1", "aws_region", "eu-west-1"),
        ("PROOFGATE_PUBLIC_URL", "https://id.example.com", "public_url", "https://id.example.com"),
        ("PROOFGATE_ADMIN_KEY", ADMIN, "admin_key", ADMIN),
        (
            "PROOFGATE_CORS_ORIGINS",
            "http://localhost:3000, https://app.example.com,,",
            "cors_origins",
            ("http://localhost:3000", "https://app.example.com"),
        ),
        ("PROOFGATE_CORS_ORIGINS", "*", "cors_origins", ("*",)),
        ("PROOFGATE_HOST", "0.0.0.0", "host", "0.0.0.0"),
        ("PROOFGATE_PORT", "9001", "port", 9001),
    ],
)
def test_each_variable(
    tmp_path: Path, variable: str, value: str, attribute: str, expected: object
) -> None:
    init_secrets(tmp_path)  # what PROOFGATE_BACKEND=dynamodb needs to start
    settings = Settings.from_env(env(tmp_path, **{variable: value}))
    assert getattr(settings, attribute) == expected


@pytest.mark.parametrize("key", [bytes(16), bytes(24), bytes(range(32))])
@pytest.mark.parametrize("padded", [True, False])
def test_cursor_key_lengths_and_padding(tmp_path: Path, key: bytes, padded: bool) -> None:
    text = base64.urlsafe_b64encode(key).decode()
    text = text if padded else text.rstrip("=")
    settings = Settings.from_env(env(tmp_path, PROOFGATE_CURSOR_KEY=text))
    assert settings.cursor_key == key


def test_empty_values_count_as_unset(tmp_path: Path) -> None:
    names = ("BACKEND", "TABLE", "DYNAMODB_ENDPOINT", "AWS_REGION", "CORS_ORIGINS", "HOST", "PORT")
    settings = Settings.from_env(env(tmp_path, **{f"PROOFGATE_{n}": "  " for n in names}))
    assert settings == Settings.from_env(env(tmp_path))


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PROOFGATE_BACKEND", "postgres"),
        ("PROOFGATE_TABLE", "ab"),
        ("PROOFGATE_TABLE", "bad name"),
        ("PROOFGATE_DYNAMODB_ENDPOINT", "localhost:8000"),
        ("PROOFGATE_DYNAMODB_ENDPOINT", "ftp://127.0.0.1"),
        ("PROOFGATE_AWS_REGION", "mars"),
        ("PROOFGATE_CURSOR_KEY", "c2hvcnQ"),
        ("PROOFGATE_CURSOR_KEY", KEY_32.replace("A", "+")),
        ("PROOFGATE_ADMIN_KEY", "short"),
        ("PROOFGATE_CORS_ORIGINS", "http://localhost:3000/"),
        ("PROOFGATE_CORS_ORIGINS", "localhost:3000"),
        ("PROOFGATE_CORS_ORIGINS", "http://ok.example, https://x.example/app"),
        ("PROOFGATE_PUBLIC_URL", "id.example.com"),
        ("PROOFGATE_PORT", "http"),
        ("PROOFGATE_PORT", "0"),
        ("PROOFGATE_PORT", "65536"),
        ("PROOFGATE_PORT", "-1"),
    ],
)
def test_invalid_value_names_the_variable_and_writes_nothing(
    tmp_path: Path, variable: str, value: str
) -> None:
    data_dir = tmp_path / "data"
    with pytest.raises(ConfigurationError, match=variable):
        Settings.from_env(env(data_dir, **{variable: value}))
    assert not data_dir.exists()


def test_corrupt_cursor_key_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / CURSOR_KEY_FILE).write_text("not a key\n")
    with pytest.raises(ConfigurationError, match=CURSOR_KEY_FILE):
        Settings.from_env(env(tmp_path))


def test_repr_hides_secrets(tmp_path: Path) -> None:
    settings = Settings.from_env(env(tmp_path))
    text = repr(settings)
    assert settings.admin_key not in text
    assert repr(settings.cursor_key) not in text


def test_settings_are_frozen(tmp_path: Path) -> None:
    settings = Settings.from_env(env(tmp_path))
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]


def test_ipv6_host_url() -> None:
    settings = Settings(cursor_key=bytes(32), admin_key=ADMIN, host="::1", port=8080)
    assert settings.url == "http://[::1]:8080"


def test_table_location_reads_no_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    location = TableLocation.from_env(
        {
            "PROOFGATE_TABLE": "t-1",
            "PROOFGATE_AWS_REGION": "eu-central-1",
            "PROOFGATE_DYNAMODB_ENDPOINT": "http://127.0.0.1:1",
        }
    )
    assert location == TableLocation("t-1", "eu-central-1", "http://127.0.0.1:1")
    assert list(tmp_path.iterdir()) == []


def test_key_file_is_generated_once(tmp_path: Path) -> None:
    calls: list[int] = []

    def generate() -> str:
        calls.append(1)
        return f"key-{len(calls)}"

    path = tmp_path / "nested" / "signing.key"
    assert read_or_create(path, generate) == "key-1"
    assert read_or_create(path, generate) == "key-1"
    assert len(calls) == 1


def test_key_file_race_keeps_the_first_writer(tmp_path: Path) -> None:
    """Another process publishes its key while ours is being generated: both
    must end up with the winner's key, and no draft file is left behind."""
    path = tmp_path / "cursor.key"

    def generate_while_another_process_wins() -> str:
        path.write_text("winner\n")
        return "loser"

    assert read_or_create(path, generate_while_another_process_wins) == "winner"
    assert [p.name for p in tmp_path.iterdir()] == ["cursor.key"]


def test_empty_key_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "admin.key"
    path.write_text("\n")
    with pytest.raises(ConfigurationError, match="empty"):
        read_or_create(path, lambda: "unused")


def test_labels_use_the_public_url_else_the_local_one(tmp_path: Path) -> None:
    local = Settings.from_env(env(tmp_path, PROOFGATE_PORT="8123"))
    assert local.label_url == "http://127.0.0.1:8123"
    public = Settings.from_env(env(tmp_path, PROOFGATE_PUBLIC_URL="https://id.example.com"))
    assert public.label_url == "https://id.example.com"
