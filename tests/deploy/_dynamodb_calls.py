"""The DynamoDB operations the driver's source can call, read with ``ast``.

A call is named by the aiobotocore client's method (``client.get_item(...)``,
or the method name as a string handed to ``getattr``), by the operation name
as a string (``"GetItem"``, as a raw request's ``X-Amz-Target`` would carry
it), or by a full target (``"DynamoDB_20120810.GetItem"``). Names come from
botocore's own service model, so a new call of any operation is seen.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import botocore.session  # type: ignore[import-untyped]
from botocore import xform_name

from storage.dynamodb._client import FORBIDDEN_OPERATIONS
from storage.dynamodb._requests import _TRANSACT_KINDS
from tests._support.source import ROOT

DRIVER = ROOT / "storage" / "dynamodb"
# `proofgate create-table`: run once with the operator's credentials (or
# replaced by deploy/table.yaml), never by the service.
PROVISIONING = frozenset({"_table.py"})
_TARGET_PREFIX = "DynamoDB_20120810."


@cache
def operations() -> dict[str, str]:
    """Every DynamoDB operation by its client method name (``get_item``)."""
    model = botocore.session.get_session().get_service_model("dynamodb")
    return {xform_name(name): name for name in model.operation_names}


def _named(node: ast.AST) -> str | None:
    by_method = operations()
    by_name = set(by_method.values())
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return by_method.get(node.func.attr)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        value = node.value.removeprefix(_TARGET_PREFIX)
        if value in by_method:
            return by_method[value]
        if value in by_name:
            return value
    return None


def _exported(tree: ast.AST) -> set[int]:
    """The strings of ``__all__``: names of this package's functions, not calls."""
    return {
        id(node)
        for statement in ast.walk(tree)
        if isinstance(statement, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets)
        for node in ast.walk(statement.value)
    }


def called(files: Iterable[Path]) -> set[str]:
    """The operations named in ``files``, less the ones the client refuses."""
    found: set[str] = set()
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        exported = _exported(tree)
        found.update(
            name
            for node in ast.walk(tree)
            if id(node) not in exported and (name := _named(node)) is not None
        )
    return found - set(FORBIDDEN_OPERATIONS)


def serving_files(driver: Path = DRIVER) -> list[Path]:
    return [path for path in sorted(driver.rglob("*.py")) if path.name not in PROVISIONING]


def iam_actions(calls: Iterable[str]) -> set[str]:
    """IAM has no TransactWriteItems action: each item of a transaction is
    authorised as its own kind (Put as PutItem, ConditionCheck as
    ConditionCheckItem), so a transaction needs the kinds the driver writes."""
    actions: set[str] = set()
    for call in calls:
        if call == "TransactWriteItems":
            actions |= {f"dynamodb:{kind}Item" for kind in _TRANSACT_KINDS.values()}
        else:
            actions.add(f"dynamodb:{call}")
    return actions
