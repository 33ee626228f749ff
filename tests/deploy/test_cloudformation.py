"""deploy/table.yaml against the one table definition in code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from storage.table import TABLE
from tests.deploy._templates import DEPLOY, lint, load

TEMPLATE = DEPLOY / "table.yaml"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load(TEMPLATE)


@pytest.fixture(scope="module")
def table(template: dict[str, Any]) -> dict[str, Any]:
    resources = template["Resources"]
    tables = [r for r in resources.values() if r["Type"] == "AWS::DynamoDB::Table"]
    assert len(tables) == 1
    properties: dict[str, Any] = tables[0]["Properties"]
    return properties


def test_keys_and_indexes_match_the_table_definition(table: dict[str, Any]) -> None:
    request = TABLE.create_table_request()
    assert table["BillingMode"] == request["BillingMode"]
    assert table["KeySchema"] == request["KeySchema"]
    assert sorted(table["AttributeDefinitions"], key=str) == sorted(
        request["AttributeDefinitions"], key=str
    )
    assert table["GlobalSecondaryIndexes"] == request["GlobalSecondaryIndexes"]
    assert table["DeletionProtectionEnabled"] is request["DeletionProtectionEnabled"] is True
    assert all(
        i["Projection"] == {"ProjectionType": "ALL"} for i in table["GlobalSecondaryIndexes"]
    )


def test_stream_ttl_and_recovery_match(table: dict[str, Any]) -> None:
    stream = TABLE.create_table_request()["StreamSpecification"]
    assert stream["StreamEnabled"] is True
    assert table["StreamSpecification"] == {"StreamViewType": stream["StreamViewType"]}
    assert table["TimeToLiveSpecification"] == TABLE.ttl_request()["TimeToLiveSpecification"]
    assert (
        table["PointInTimeRecoverySpecification"]
        == TABLE.pitr_request()["PointInTimeRecoverySpecification"]
    )


def test_table_name_is_a_parameter_defaulting_to_the_code(
    template: dict[str, Any], table: dict[str, Any]
) -> None:
    parameter = template["Parameters"]["TableName"]
    assert table["TableName"] == {"Ref": "TableName"}
    assert parameter["Default"] == TABLE.name
    assert re.fullmatch(parameter["AllowedPattern"], TABLE.name)


def test_table_survives_stack_deletion(template: dict[str, Any]) -> None:
    (resource,) = template["Resources"].values()
    assert resource["DeletionPolicy"] == resource["UpdateReplacePolicy"] == "Retain"
    assert resource["Properties"]["DeletionProtectionEnabled"] is True


def test_cfn_lint_finds_nothing() -> None:
    assert lint(TEMPLATE) == []


def test_cfn_lint_catches_a_broken_template(tmp_path: Path) -> None:
    broken = tmp_path / "table.yaml"
    broken.write_text(
        TEMPLATE.read_text().replace("BillingMode: PAY_PER_REQUEST", "BillingMode: FREE")
    )
    assert any("FREE" in problem for problem in lint(broken))
