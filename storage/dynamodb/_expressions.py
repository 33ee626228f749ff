"""Typed conditions, updates and sort-key ranges rendered to DynamoDB expressions.

Every attribute name and value goes through a placeholder, so no reserved word
or user value is ever spliced into an expression; and a placeholder is created
only when the expression uses it, because DynamoDB rejects unused ones (moto
does not, so tests alone would never notice).
"""

from __future__ import annotations

from typing import Any

from domain.errors import AccessPatternError

from ..conditions import (
    All,
    Any_,
    AttributeAbsent,
    AttributeExists,
    Compare,
    Comparison,
    Condition,
    ItemAbsent,
    ItemExists,
)
from ..registry import SortOperator, SortRange
from ..table import TABLE, IndexDefinition
from ..values import Value
from ..writes import Update
from ._codec import AttributeValue, serialize

__all__ = ["Expression"]

_PK = TABLE.primary.partition_key

_KEY_OPERATORS = {
    SortOperator.EQ: "=",
    SortOperator.LT: "<",
    SortOperator.LTE: "<=",
    SortOperator.GT: ">",
    SortOperator.GTE: ">=",
}


class Expression:
    """The placeholders of one request, shared by all the expressions it sends."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._values: dict[str, AttributeValue] = {}

    def name(self, attribute: str) -> str:
        placeholder = self._names.get(attribute)
        if placeholder is None:
            placeholder = self._names[attribute] = f"#n{len(self._names)}"
        return placeholder

    def value(self, value: Value) -> str:
        return self._attribute_value(serialize(value))

    def _attribute_value(self, value: AttributeValue) -> str:
        placeholder = f":v{len(self._values)}"
        self._values[placeholder] = value
        return placeholder

    def parameters(self) -> dict[str, Any]:
        """ExpressionAttributeNames/Values, each present only when non-empty."""
        parameters: dict[str, Any] = {}
        if self._names:
            parameters["ExpressionAttributeNames"] = {p: a for a, p in self._names.items()}
        if self._values:
            parameters["ExpressionAttributeValues"] = dict(self._values)
        return parameters

    def condition(self, condition: Condition) -> str:
        match condition:
            case ItemExists():
                return f"attribute_exists({self.name(_PK)})"
            case ItemAbsent():
                return f"attribute_not_exists({self.name(_PK)})"
            case AttributeExists(name):
                return f"attribute_exists({self.name(name)})"
            case AttributeAbsent(name):
                return f"attribute_not_exists({self.name(name)})"
            case Compare(name, op, value):
                return self._compare(name, op, value)
            case All(conditions):
                return "(" + " AND ".join(self.condition(c) for c in conditions) + ")"
            case Any_(conditions):
                return "(" + " OR ".join(self.condition(c) for c in conditions) + ")"
        raise AccessPatternError(f"Unknown condition {condition!r}")

    def _compare(self, attribute: str, op: Comparison, value: Value) -> str:
        """Typed, as ``conditions.evaluate`` is: a value of another type is never
        equal and never ordered. Spelled out because engines disagree (moto
        holds ``True = 1`` and fails with a 500 on ``"5" < 6``)."""
        name = self.name(attribute)
        operand = serialize(value)
        kind = next(iter(operand))
        typed = f"attribute_type({name}, {self.value(kind)})"
        operator = Comparison.EQ.value if op is Comparison.NE else op.value
        compared = f"({typed} AND {name} {operator} {self._attribute_value(operand)})"
        return f"(NOT {compared})" if op is Comparison.NE else compared

    def update(self, update: Update) -> str:
        assignments = [f"{self.name(a)} = {self.value(v)}" for a, v in update.set.items()]
        for attribute, value in update.set_if_absent.items():
            name = self.name(attribute)
            assignments.append(f"{name} = if_not_exists({name}, {self.value(value)})")
        clauses = []
        if assignments:
            clauses.append("SET " + ", ".join(assignments))
        if update.add:
            clauses.append(
                "ADD " + ", ".join(f"{self.name(a)} {self.value(v)}" for a, v in update.add.items())
            )
        if update.remove:
            clauses.append("REMOVE " + ", ".join(self.name(a) for a in update.remove))
        return " ".join(clauses)

    def key_condition(self, index: IndexDefinition, partition: str, sort: SortRange) -> str:
        partition_clause = f"{self.name(index.partition_key)} = {self.value(partition)}"
        sort_key = self.name(index.sort_key)
        match sort.operator:
            case SortOperator.BEGINS_WITH:
                sort_clause = f"begins_with({sort_key}, {self.value(sort.value)})"
            case SortOperator.BETWEEN:
                if sort.upper is None:
                    raise AccessPatternError("A 'between' sort range needs an upper bound")
                lower = self.value(sort.value)
                sort_clause = f"{sort_key} BETWEEN {lower} AND {self.value(sort.upper)}"
            case operator:
                sort_clause = f"{sort_key} {_KEY_OPERATORS[operator]} {self.value(sort.value)}"
        return f"{partition_clause} AND {sort_clause}"
