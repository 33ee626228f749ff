"""Persisted-document manifests from client tooling (Apollo, Relay, GraphQL
Codegen): loaded by the registry, run by ``documentId`` alone under
``enforce``, and written back by ``proofgate operations export``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _asgi import answer, codes
from _limits import ADMIN_KEY, Client, serve

from api.cli.main import main
from api.graphql.schema import schema
from api.operations.manifests import APOLLO_FORMAT
from api.operations.registry import load_registry
from api.operations.trusted import DOCUMENT_ID, with_document_id
from api.settings.limits import Limits
from api.settings.operations import OperationSettings, TrustedDocuments
from domain.errors import ConfigurationError

APOLLO_BODY = "query ApolloHealth { health { status } }"
RELAY_TEXT = "query RelayViewer {\n  viewer {\n    role\n  }\n}\n"
CODEGEN_DOC = "query CodegenBrand($id: ID!) { brand(id: $id) { id name } }"
RELAY_ID = hashlib.md5(RELAY_TEXT.encode(), usedforsecurity=False).hexdigest()
UNREGISTERED = "query Other { health { version } }"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def write_manifests(directory: Path) -> None:
    """One manifest of each format, as the tools write them."""
    apollo = {
        "format": APOLLO_FORMAT,
        "version": 1,
        "operations": [
            {
                "id": sha256(APOLLO_BODY),
                "name": "ApolloHealth",
                "type": "query",
                "body": APOLLO_BODY,
            }
        ],
    }
    (directory / "persisted-query-manifest.json").write_text(json.dumps(apollo))
    (directory / "persisted_queries.json").write_text(json.dumps({RELAY_ID: RELAY_TEXT}))
    codegen = {sha256(CODEGEN_DOC): CODEGEN_DOC}
    (directory / "persisted-documents.json").write_text(json.dumps(codegen))


def test_a_manifest_of_each_format_loads(tmp_path: Path) -> None:
    write_manifests(tmp_path)
    registry = load_registry(schema, Limits(), tmp_path)
    assert set(registry.by_name) == {"ApolloHealth", "RelayViewer", "CodegenBrand"}
    assert registry.document(sha256(APOLLO_BODY)) == APOLLO_BODY
    assert registry.document(RELAY_ID) == RELAY_TEXT, "Relay's MD5 id maps to its text"
    assert registry.document(sha256(CODEGEN_DOC)) == CODEGEN_DOC
    assert registry.document("sha256:" + sha256(CODEGEN_DOC)) == CODEGEN_DOC
    assert registry.document("unknown") is None
    assert all(registry.trusts(text) for text in (APOLLO_BODY, RELAY_TEXT, CODEGEN_DOC))


def test_the_same_document_in_two_manifests_registers_once(tmp_path: Path) -> None:
    write_manifests(tmp_path)
    (tmp_path / "relay_again.json").write_text(json.dumps({"other-id": RELAY_TEXT}))
    registry = load_registry(schema, Limits(), tmp_path)
    assert registry.document("other-id") == registry.document(RELAY_ID) == RELAY_TEXT


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json", "Expecting value"),
        ("[1, 2]", "an object of id: document"),
        ('{"a": 1}', "values must be document texts"),
        (json.dumps({"format": APOLLO_FORMAT, "version": 2, "operations": []}), "version 2"),
        (json.dumps({"format": APOLLO_FORMAT, "version": 1, "operations": [{"id": "x"}]}), "body"),
        (json.dumps({"x" * 200: APOLLO_BODY}), "over 128 characters"),
        (json.dumps({"a": "query { health { status } }"}), "must be named"),
        (json.dumps({"a": "query Bad { nope }"}), "Cannot query field"),
    ],
)
def test_a_bad_manifest_stops_start_up_in_one_line(
    tmp_path: Path, content: str, reason: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(ConfigurationError) as raised:
        load_registry(schema, Limits(), tmp_path)
    assert str(bad) in raised.value.message
    assert reason in raised.value.message
    assert "\n" not in raised.value.message


def test_a_duplicate_key_is_refused_in_one_line_naming_the_file(tmp_path: Path) -> None:
    """JSON keeps the last of two equal keys; a manifest must not, silently."""
    bad = tmp_path / "persisted_queries.json"
    first, second = json.dumps(APOLLO_BODY), json.dumps(RELAY_TEXT)
    bad.write_text(f'{{"same": {first}, "same": {second}}}')
    with pytest.raises(ConfigurationError) as raised:
        load_registry(schema, Limits(), tmp_path)
    assert str(bad) in raised.value.message and "'same' appears twice" in raised.value.message
    assert "\n" not in raised.value.message
    bad.write_text(json.dumps({"same": APOLLO_BODY, "other": RELAY_TEXT}))  # the control
    assert load_registry(schema, Limits(), tmp_path).document("same") == APOLLO_BODY


def test_runaway_nesting_is_refused_in_one_line_naming_the_file(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigurationError) as raised:
        load_registry(schema, Limits(), tmp_path)
    assert str(deep) in raised.value.message and "nested too deeply" in raised.value.message
    assert "\n" not in raised.value.message


def test_the_cli_answers_runaway_nesting_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "deep.json").write_text('{"a": ' * 100_000 + '"x"' + "}" * 100_000)
    assert main(["operations", "check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err and len(err.splitlines()) <= 2


def test_an_apollo_id_must_be_its_bodys_sha256(tmp_path: Path) -> None:
    def apollo(document_id: str) -> str:
        operation = {"id": document_id, "name": "A", "type": "query", "body": APOLLO_BODY}
        return json.dumps({"format": APOLLO_FORMAT, "version": 1, "operations": [operation]})

    manifest = tmp_path / "persisted-query-manifest.json"
    manifest.write_text(apollo(sha256(RELAY_TEXT)))
    with pytest.raises(ConfigurationError, match="is not the SHA-256 of its body"):
        load_registry(schema, Limits(), tmp_path)
    manifest.write_text(apollo("sha256:" + sha256(APOLLO_BODY).upper()))  # the control
    assert load_registry(schema, Limits(), tmp_path).document(sha256(APOLLO_BODY)) == APOLLO_BODY


@pytest.mark.parametrize("spelling", ["{}", "sha256:{}", "{upper}"])
def test_an_id_that_is_another_documents_hash_is_refused(tmp_path: Path, spelling: str) -> None:
    """Whatever the spelling, one SHA-256 names one text: were this loaded,
    documentId=<h> would run RELAY_TEXT and sha256:<h>, APQ or the text
    itself APOLLO_BODY."""
    taken = sha256(APOLLO_BODY)
    (tmp_path / "a.graphql").write_text(APOLLO_BODY)
    planted = spelling.format(taken, upper=taken.upper())
    (tmp_path / "b.json").write_text(json.dumps({planted: RELAY_TEXT}))
    with pytest.raises(ConfigurationError) as raised:
        load_registry(schema, Limits(), tmp_path)
    assert "is the SHA-256 of another registered document" in raised.value.message
    assert str(tmp_path / "b.json") in raised.value.message


def test_every_spelling_of_an_id_names_one_text(tmp_path: Path) -> None:
    """The control: an id that is its own text's hash, or no hash at all."""
    (tmp_path / "a.graphql").write_text(APOLLO_BODY)
    own = sha256(RELAY_TEXT)
    (tmp_path / "b.json").write_text(json.dumps({"sha256:" + own.upper(): RELAY_TEXT}))
    registry = load_registry(schema, Limits(), tmp_path)
    for spelling in (own, "sha256:" + own, own.upper(), "sha256:" + own.upper()):
        assert registry.document(spelling) == RELAY_TEXT
    assert registry.document(sha256(APOLLO_BODY)) == APOLLO_BODY


def test_two_spellings_of_one_id_for_two_documents_are_refused(tmp_path: Path) -> None:
    shaped = "a" * 64
    (tmp_path / "a.json").write_text(json.dumps({shaped: APOLLO_BODY}))
    (tmp_path / "b.json").write_text(json.dumps({"sha256:" + shaped.upper(): RELAY_TEXT}))
    with pytest.raises(ConfigurationError, match="names two different documents"):
        load_registry(schema, Limits(), tmp_path)


def test_one_id_for_two_documents_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"same": APOLLO_BODY}))
    (tmp_path / "b.json").write_text(json.dumps({"same": RELAY_TEXT}))
    with pytest.raises(ConfigurationError, match="document id same names two different"):
        load_registry(schema, Limits(), tmp_path)


@pytest.fixture
async def enforced(tmp_path: Path) -> AsyncIterator[Client]:
    write_manifests(tmp_path)
    operations = OperationSettings(directory=tmp_path, trusted_documents=TrustedDocuments.ENFORCE)
    async with serve(operations=operations) as client:
        yield client


async def post(client: Client, body: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = await client.http.post("/graphql", json=body, headers=headers)
    result: dict[str, Any] = response.json()
    return result


async def test_an_id_only_request_runs_under_enforce(enforced: Client) -> None:
    client = enforced
    brand_id, brand_key = await client.brand()
    assert answer(await post(client, {"documentId": RELAY_ID}, brand_key)) == {
        "data": {"viewer": {"role": "BRAND"}}
    }
    apollo = await post(client, {"documentId": sha256(APOLLO_BODY)})
    assert answer(apollo) == {"data": {"health": {"status": "ok"}}}
    codegen = await post(
        client,
        {"documentId": "sha256:" + sha256(CODEGEN_DOC), "variables": {"id": brand_id}},
        brand_key,
    )
    assert answer(codegen) == {"data": {"brand": {"id": brand_id, "name": "Limits"}}}
    persisted = {"persistedQuery": {"version": 1, "sha256Hash": sha256(APOLLO_BODY)}}
    assert await post(client, {"extensions": persisted}) == apollo
    by_get = await client.http.get("/graphql", params={"documentId": RELAY_ID})
    assert answer(by_get.json()) == {"data": {"viewer": {"role": "ANONYMOUS"}}}


async def test_an_unknown_id_is_refused(enforced: Client) -> None:
    client = enforced
    for document_id in ("0" * 32, "sha256:" + "0" * 64, "x" * 500, 42, None):
        body = await post(client, {"documentId": document_id})
        assert codes(body) == ["PERSISTED_QUERY_NOT_FOUND"], document_id
        assert body["errors"][0]["message"] == "PersistedQueryNotFound"
        assert "data" not in body or body["data"] is None
    unknown_hash = {"persistedQuery": {"version": 1, "sha256Hash": sha256(UNREGISTERED)}}
    assert codes(await post(client, {"extensions": unknown_hash})) == ["PERSISTED_QUERY_NOT_FOUND"]
    refused = await post(client, {"query": UNREGISTERED})
    assert codes(refused) == ["PERSISTED_QUERY_NOT_ALLOWED"]
    admin = await post(client, {"query": UNREGISTERED}, ADMIN_KEY)
    assert "errors" not in admin, "the admin key still runs anything"


@pytest.mark.parametrize("tool", ["apollo", "relay", "codegen"])
def test_export_writes_a_manifest_the_registry_loads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tool: str
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    write_manifests(source)
    assert main(["operations", "export", "--format", tool, str(source)]) == 0
    exported = json.loads(capsys.readouterr().out)
    if tool == "apollo":
        assert exported["format"] == APOLLO_FORMAT
        names = {op["name"] for op in exported["operations"]}
        assert {"ApolloHealth", "RelayViewer", "CodegenBrand"} <= names
        assert all(op["id"] == sha256(op["body"]) for op in exported["operations"])
    elif tool == "relay":
        assert exported[RELAY_ID] == RELAY_TEXT
    else:
        assert exported[sha256(CODEGEN_DOC)] == CODEGEN_DOC
    again = tmp_path / "again"
    again.mkdir()
    (again / "manifest.json").write_text(json.dumps(exported))
    reloaded = load_registry(schema, Limits(), again)
    original = load_registry(schema, Limits(), source, ())
    assert set(original.by_name) <= set(reloaded.by_name)


def test_a_body_document_id_travels_in_the_extensions() -> None:
    moved = with_document_id({"documentId": "abc", "extensions": {"x": 1}, "variables": {}})
    assert moved == {"variables": {}, "extensions": {"x": 1, DOCUMENT_ID: "abc"}}
    assert with_document_id([{"documentId": "a"}, {"query": "{ x }"}]) == [
        {"extensions": {DOCUMENT_ID: "a"}},
        {"query": "{ x }"},
    ]
    unchanged = {"documentId": "a", "extensions": "not an object"}
    assert with_document_id(unchanged) is unchanged
    assert with_document_id({"query": "{ x }"}) == {"query": "{ x }"}
