"""Tools from the registry: which operations are tools, their input schemas
checked against the operations' variables, their annotations, and a bad
mark stopping start-up with one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import GraphQLEnumType, GraphQLNonNull, OperationDefinitionNode, parse, type_from_ast
from jsonschema import Draft202012Validator

from api.cli.main import main
from api.graphql.schema import schema
from api.mcp.tools import ToolSpec, tool_specs
from api.operations.defaults import default_documents
from api.operations.largest_variables import largest_variables
from api.operations.registry import load_registry
from api.settings.limits import Limits
from domain.errors import ConfigurationError

GRANT = """# @tool idempotent
# Give a brand credits.
mutation grant($brandId: ID!, $amount: Decimal!, $key: String!) {
  grantCredits(brandId: $brandId, amount: $amount, idempotencyKey: $key) { id }
}
"""
REVOKE = """# @tool
mutation revoke($id: ID!) { revokeApiKey(id: $id) { id } }
"""
UNMARKED = """# Not a tool: the mark must be the first line.
# @tool
query untouched { health { status } }
"""


def specs(directory: Path | None = None) -> dict[str, ToolSpec]:
    registry = load_registry(schema, Limits(), directory, default_documents())
    return dict(tool_specs(schema.graphql_schema, registry))


def definition(spec: ToolSpec) -> OperationDefinitionNode:
    node = parse(spec.operation.text).definitions[0]
    assert isinstance(node, OperationDefinitionNode)
    return node


@pytest.mark.parametrize("name", sorted(specs()))
def test_input_schema_follows_the_operation_variables(name: str) -> None:
    spec = specs()[name]
    input_schema = spec.input_schema
    Draft202012Validator.check_schema(input_schema)
    variables = definition(spec).variable_definitions
    assert list(input_schema["properties"]) == [v.variable.name.value for v in variables]
    required = [
        v.variable.name.value
        for v in variables
        if v.default_value is None
        and isinstance(type_from_ast(schema.graphql_schema, v.type), GraphQLNonNull)
    ]
    assert input_schema.get("required", []) == required
    # What GraphQL accepts at the operation's largest, the schema accepts too.
    sample = largest_variables(schema.graphql_schema, definition(spec))
    Draft202012Validator(input_schema).validate(sample)


def test_types_enums_and_descriptions_come_from_the_schema() -> None:
    threats = specs()["list_brand_threats"].input_schema["properties"]
    severity = schema.graphql_schema.type_map["Severity"]
    assert isinstance(severity, GraphQLEnumType)
    assert threats["minSeverity"]["enum"] == list(severity.values)
    assert (threats["since"]["type"], threats["since"]["format"]) == ("string", "date-time")
    assert threats["first"] == {"type": "integer", "default": 20}
    product = specs()["register_product"].input_schema["properties"]["input"]
    assert product["required"] == ["brandId", "name"]
    assert product["additionalProperties"] is False
    assert "16 KB" in product["properties"]["metadata"]["description"]


def test_an_operators_file_marks_its_own_tools(tmp_path: Path) -> None:
    (tmp_path / "grant.graphql").write_text(GRANT)
    (tmp_path / "revoke.graphql").write_text(REVOKE)
    (tmp_path / "untouched.graphql").write_text(UNMARKED)
    found = specs(tmp_path)
    assert "untouched" not in found
    grant = found["grant"]
    key = grant.input_schema["properties"]["key"]
    assert key["description"].startswith("Required. A retry with the same key")
    assert grant.description == "Changes data (runs the mutation grant). Give a brand credits."
    assert _hints(grant.annotations) == (False, True, True)
    # Without "additive" a mutation is destructive as far as an agent knows.
    assert _hints(found["revoke"].annotations) == (False, True, False)


def test_default_tools_annotations() -> None:
    found = specs()
    for name in ("verify_code", "lookup_product", "list_brand_products", "get_brand_ledger"):
        assert found[name].annotations["readOnlyHint"] is True
    for name in ("register_product", "resolve_threat"):
        assert _hints(found[name].annotations) == (False, False, True)
        assert found[name].description.startswith("Changes data")
    assert {n for n, s in found.items() if s.public} == {"verify_code", "lookup_product"}
    verify = parse(found["verify_code"].operation.text).definitions[0]
    assert isinstance(verify, OperationDefinitionNode)
    assert verify.operation.value == "query"  # the read-only verification, never verifyProduct


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("# @tool public sneaky\nquery a { health { status } }\n", "unknown @tool words sneaky"),
        (
            '# @tool\nsubscription b { threatAlerts(brandId: "x") { id } }\n',
            "a subscription, which cannot be a tool",
        ),
    ],
)
def test_a_bad_mark_stops_start_up_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, reason: str
) -> None:
    path = tmp_path / "bad.graphql"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match=reason) as refused:
        specs(tmp_path)
    assert f"Invalid operation file {path}" in refused.value.message
    assert main(["operations", "check", str(tmp_path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"proofgate: error: Invalid operation file {path}")


def _hints(annotations: dict[str, bool]) -> tuple[bool, bool, bool]:
    return (
        annotations["readOnlyHint"],
        annotations["destructiveHint"],
        annotations["idempotentHint"],
    )
