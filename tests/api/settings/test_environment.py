"""The one reader of ``PROOFGATE_*`` variables: what counts as set, and the
one-line error an operator gets for a malformed value."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from api.settings.environment import EnvironmentReader
from api.settings.gateway import Environment, Settings
from domain.errors import ConfigurationError

# Exactly what an operator reads, message and hint: these are the messages
# the six readers this one replaced produced, pinned so a change is deliberate.
MESSAGES = [
    ("PROOFGATE_BACKEND", "postgres", "must be one of sqlite, dynamodb, got 'postgres'", None),
    (
        "PROOFGATE_TABLE",
        "ab",
        "must be 3 to 255 of the characters A-Z a-z 0-9 _ . -, got 'ab'",
        None,
    ),
    (
        "PROOFGATE_DYNAMODB_ENDPOINT",
        "ftp://a.example",
        "must be an http(s) URL, got 'ftp://a.example'",
        None,
    ),
    (
        "PROOFGATE_CORS_ORIGINS",
        "http://ok.example, https://x.example/app",
        "'https://x.example/app' is not an origin: browsers send scheme://host[:port], "
        "with no path or trailing slash",
        None,
    ),
    ("PROOFGATE_PORT", "65536", "must be a port number 1-65535, got '65536'", None),
    ("PROOFGATE_ADMIN_KEY", "short", "needs at least 16 characters", None),
    ("PROOFGATE_HASH_SALT", "c2hvcnQ", "expected at least 16 bytes, base64url encoded", None),
    ("PROOFGATE_MAX_DEPTH", "0", "must be a positive integer, got '0'", None),
    ("PROOFGATE_INTROSPECTION", "maybe", "must be on or off, got 'maybe'", None),
    ("PROOFGATE_RATE_LIMIT", "-5", "must be calls per minute or off, got '-5'", None),
    ("PROOFGATE_PERSISTED_QUERIES", "many", "must be a number of entries or off, got 'many'", None),
    ("PROOFGATE_KEY_CACHE_MS", "-1", "must be milliseconds or off, got '-1'", None),
    ("PROOFGATE_REGISTRATION_FEE", "0.00", "must be greater than zero, got 0.00", None),
    ("PROOFGATE_FREE_PLAN_CREDITS", "-5", "must not be negative, got -5.00", None),
    (
        "PROOFGATE_THREAT_VELOCITY_MAX_PER_DAY",
        "1e3",
        "must be a non-negative decimal such as 2.5, got '1e3'",
        None,
    ),
    ("PROOFGATE_OUTBOX_SHARDS", "four", "'four'", "Use version:count pairs, e.g. 1:4,2:8."),
    ("PROOFGATE_WEBHOOK_ALLOW_PRIVATE", "yes", "use 1 or 0", None),
    ("PROOFGATE_WS_KEEPALIVE_MS", "1.5", "must be a positive integer, got '1.5'", None),
]


@pytest.mark.parametrize(("variable", "value", "problem", "hint"), MESSAGES)
def test_a_malformed_value_is_one_line_naming_the_variable(
    variable: str, value: str, problem: str, hint: str | None
) -> None:
    with pytest.raises(ConfigurationError) as raised:
        Environment.read({variable: value})
    assert raised.value.message == f"Invalid {variable}: {problem}"
    assert raised.value.hint == hint
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_messages_that_name_their_source_are_kept() -> None:
    with pytest.raises(ConfigurationError) as raised:
        Environment.read({"PROOFGATE_CURSOR_KEY": "c2hvcnQ"})
    assert raised.value.message == (
        "Invalid cursor key in PROOFGATE_CURSOR_KEY: expected 16, 24 or 32 bytes, base64url encoded"
    )
    assert raised.value.hint is not None and "urandom(32)" in raised.value.hint


def test_a_check_pydantic_makes_itself_also_names_the_variable() -> None:
    class Probe(EnvironmentReader):
        probe_count: int = 1

    assert Probe.read({"PROOFGATE_PROBE_COUNT": "7"}).probe_count == 7
    with pytest.raises(ConfigurationError, match=r"^Invalid PROOFGATE_PROBE_COUNT: Input should"):
        Probe.read({"PROOFGATE_PROBE_COUNT": "seven"})


def test_of_several_malformed_values_one_is_reported_on_one_line() -> None:
    with pytest.raises(ConfigurationError) as raised:
        Environment.read({"PROOFGATE_PORT": "x", "PROOFGATE_MAX_DEPTH": "x"})
    message = raised.value.message
    assert "\n" not in message
    assert message.count("PROOFGATE_") == 1
    assert message.startswith(("Invalid PROOFGATE_PORT:", "Invalid PROOFGATE_MAX_DEPTH:"))


@pytest.mark.parametrize("blank", ["", " ", "\t\n"])
def test_blank_values_count_as_unset(blank: str) -> None:
    everything = {name: blank for name in Environment.variables()}
    assert Environment.read(everything) == Environment.read({})


def test_only_exact_upper_case_names_are_read() -> None:
    assert Environment.read({"PROOFGATE_MAX_DEPTH": "7"}).max_depth == 7
    for name in ("proofgate_max_depth", "Proofgate_Max_Depth", "MAX_DEPTH"):
        assert Environment.read({name: "7"}).max_depth == 10
    assert Environment.read({"PROOFGATE_NOT_A_SETTING": "x"}) == Environment.read({})


def test_values_are_stripped() -> None:
    env = Environment.read({"PROOFGATE_HOST": " 0.0.0.0 ", "PROOFGATE_MAX_COST": " 42\n"})
    assert (env.host, env.max_cost) == ("0.0.0.0", 42)


def test_every_variable_is_named_once() -> None:
    variables = Environment.variables()
    assert len(variables) == len(set(variables))
    assert {"PROOFGATE_BACKEND", "PROOFGATE_MAX_DEPTH", "PROOFGATE_OUTBOX_SHARDS"} <= set(variables)
    assert all(name.isupper() and name.startswith("PROOFGATE_") for name in variables)


def test_reading_touches_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Environment.read({"PROOFGATE_DATA_DIR": str(tmp_path / "data")})
    assert list(tmp_path.iterdir()) == []


def test_repr_hides_secrets(tmp_path: Path) -> None:
    secret = "an-admin-key-nobody-should-see"
    salt = "c2FsdHNhbHRzYWx0c2FsdHNhbHQ"
    env = Environment.read({"PROOFGATE_ADMIN_KEY": secret, "PROOFGATE_HASH_SALT": salt})
    assert env.admin_key == secret
    assert secret not in repr(env) and repr(env.hash_salt) not in repr(env)
    assert Settings.from_env({"PROOFGATE_DATA_DIR": str(tmp_path)}).admin_key not in repr(env)


SET = {
    "PROOFGATE_BACKEND": "DynamoDB",
    "PROOFGATE_TABLE": "prod.proofgate-v2",
    "PROOFGATE_PORT": "9001",
    "PROOFGATE_CORS_ORIGINS": "http://localhost:3000,https://app.example.com",
    "PROOFGATE_MAX_DEPTH": "7",
    "PROOFGATE_INTROSPECTION": "off",
    "PROOFGATE_RATE_LIMIT": "off",
    "PROOFGATE_PERSISTED_QUERIES": "off",
    "PROOFGATE_REGISTRATION_FEE": "0.25",
    "PROOFGATE_THREAT_VELOCITY_MAX_PER_DAY": "2.5",
    "PROOFGATE_OUTBOX_SHARDS": "1:4,2:16",
    "PROOFGATE_WEBHOOK_ALLOW_PRIVATE": "1",
}


class _ReadByPydanticSettings(Environment):
    """The same sections, read by pydantic-settings' own environment source."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (env_settings,)


def _values(read: Environment) -> dict[str, object]:
    return {name: getattr(read, name) for name in Environment.model_fields}


def test_the_mapping_source_agrees_with_pydantic_settings_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Differential: for set, trimmed values our source (which reads a given
    mapping) yields what pydantic-settings' own environment source reads from
    the process environment. Blank values and other letter cases are where
    they differ on purpose (see the tests above)."""
    for name in [name for name in os.environ if name.upper().startswith("PROOFGATE_")]:
        monkeypatch.delenv(name)
    for name, value in SET.items():
        monkeypatch.setenv(name, value)
    theirs = _values(_ReadByPydanticSettings())
    assert theirs == _values(Environment.read(SET))
    assert theirs != _values(Environment.read({}))
    assert Environment() == Environment.read(SET), "constructed, it reads the process environment"
    monkeypatch.setenv("PROOFGATE_PORT", " ")
    with pytest.raises(ConfigurationError, match="Invalid PROOFGATE_PORT: "):
        _ReadByPydanticSettings()  # the sections' one-line error, whoever reads them
    assert Environment.read({**SET, "PROOFGATE_PORT": " "}).port == 8000
