"""Conditions, updates and key conditions rendered with placeholders only, and
never a placeholder the expression does not use (DynamoDB rejects those)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest

from storage import (
    All,
    Any_,
    AttributeAbsent,
    AttributeExists,
    Compare,
    Comparison,
    ConditionCheck,
    Delete,
    ItemAbsent,
    ItemExists,
    Key,
    Put,
    Update,
    WriteAction,
)
from storage.dynamodb._expressions import Expression
from storage.dynamodb._requests import transact_item, write_parameters
from storage.registry import SortOperator, SortRange
from storage.table import GSI2, TABLE

KEY = Key("PRODUCT#1", "META")


def _render(condition: Any) -> tuple[str, dict[str, Any]]:
    expression = Expression()
    text = expression.condition(condition)
    return text, expression.parameters()


def test_item_conditions_name_the_partition_key() -> None:
    assert _render(ItemExists()) == (
        "attribute_exists(#n0)",
        {"ExpressionAttributeNames": {"#n0": "PK"}},
    )
    assert _render(ItemAbsent()) == (
        "attribute_not_exists(#n0)",
        {"ExpressionAttributeNames": {"#n0": "PK"}},
    )


def test_composite_condition() -> None:
    text, parameters = _render(
        All(
            AttributeExists("status"),
            Any_(Compare("status", Comparison.NE, "RECALLED"), AttributeAbsent("recalledAt")),
            Compare("version", Comparison.LE, 3),
        )
    )

    assert text == (
        "(attribute_exists(#n0)"
        " AND ((NOT (attribute_type(#n0, :v0) AND #n0 = :v1)) OR attribute_not_exists(#n1))"
        " AND (attribute_type(#n2, :v2) AND #n2 <= :v3))"
    )
    assert parameters == {
        "ExpressionAttributeNames": {"#n0": "status", "#n1": "recalledAt", "#n2": "version"},
        "ExpressionAttributeValues": {
            ":v0": {"S": "S"},
            ":v1": {"S": "RECALLED"},
            ":v2": {"S": "N"},
            ":v3": {"N": "3"},
        },
    }


@pytest.mark.parametrize(
    ("value", "kind"),
    [("a", "S"), (1, "N"), (Decimal("1.5"), "N"), (b"a", "B"), (True, "BOOL"), (None, "NULL")],
)
def test_comparisons_are_typed(value: Any, kind: str) -> None:
    text, parameters = _render(Compare("a", Comparison.EQ, value))

    assert text == "(attribute_type(#n0, :v0) AND #n0 = :v1)"
    assert parameters["ExpressionAttributeValues"][":v0"] == {"S": kind}


def test_reserved_words_never_reach_the_expression() -> None:
    text, _ = _render(Compare("name", Comparison.EQ, None))
    assert "name" not in text


def test_update_clauses() -> None:
    update = Update(
        KEY,
        set={"status": "ACTIVE"},
        set_if_absent={"createdAt": "2024"},
        add={"scanCount": 1, "credit": Decimal("-0.10")},
        remove=("lease",),
    )
    expression = Expression()

    text = expression.update(update)

    assert text == ("SET #n0 = :v0, #n1 = if_not_exists(#n1, :v1) ADD #n2 :v2, #n3 :v3 REMOVE #n4")
    assert expression.parameters()["ExpressionAttributeValues"][":v3"] == {"N": "-0.1"}


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        (SortRange(SortOperator.EQ, "X"), "#n0 = :v0 AND #n1 = :v1"),
        (SortRange(SortOperator.BEGINS_WITH, "X"), "#n0 = :v0 AND begins_with(#n1, :v1)"),
        (SortRange(SortOperator.BETWEEN, "A", "B"), "#n0 = :v0 AND #n1 BETWEEN :v1 AND :v2"),
        (SortRange(SortOperator.LT, "X"), "#n0 = :v0 AND #n1 < :v1"),
        (SortRange(SortOperator.LTE, "X"), "#n0 = :v0 AND #n1 <= :v1"),
        (SortRange(SortOperator.GT, "X"), "#n0 = :v0 AND #n1 > :v1"),
        (SortRange(SortOperator.GTE, "X"), "#n0 = :v0 AND #n1 >= :v1"),
    ],
)
def test_key_conditions(sort: SortRange, expected: str) -> None:
    expression = Expression()
    assert expression.key_condition(GSI2, "OUTBOX#READY#1", sort) == expected
    assert expression.parameters()["ExpressionAttributeNames"] == {"#n0": "GSI2PK", "#n1": "GSI2SK"}


ACTIONS: list[WriteAction] = [
    Put({"PK": "A", "SK": "B", "n": 1}),
    Put({"PK": "A", "SK": "B"}, condition=ItemAbsent()),
    Update(KEY, add={"n": 1}),
    Update(KEY, remove=("a", "b"), condition=ItemExists()),
    Update(KEY, set={"a": 1}, set_if_absent={"b": 2}, condition=Compare("a", Comparison.LT, 5)),
    Delete(KEY),
    Delete(KEY, condition=All(AttributeExists("a"), Compare("b", Comparison.EQ, b"x"))),
    ConditionCheck(KEY, Any_(AttributeAbsent("lease"), Compare("lease", Comparison.LT, 10))),
]


@pytest.mark.parametrize("action", ACTIONS)
def test_every_placeholder_sent_is_used(action: WriteAction) -> None:
    parameters = write_parameters(action, TABLE.name)
    text = " ".join(parameters.get(k, "") for k in ("UpdateExpression", "ConditionExpression"))
    used = set(re.findall(r"[#:][a-z]\d+", text))

    assert set(parameters.get("ExpressionAttributeNames", {})) == {u for u in used if u[0] == "#"}
    assert set(parameters.get("ExpressionAttributeValues", {})) == {u for u in used if u[0] == ":"}
    assert parameters.get("ExpressionAttributeNames", True)
    assert parameters.get("ExpressionAttributeValues", True)


def test_transact_items_carry_the_action_kind() -> None:
    kinds = [next(iter(transact_item(action, "t"))) for action in ACTIONS]
    assert kinds == [
        "Put",
        "Put",
        "Update",
        "Update",
        "Update",
        "Delete",
        "Delete",
        "ConditionCheck",
    ]


def test_writes_without_conditions_send_no_expression() -> None:
    assert write_parameters(Delete(KEY), "t") == {
        "TableName": "t",
        "Key": {"PK": {"S": KEY.pk}, "SK": {"S": KEY.sk}},
    }
