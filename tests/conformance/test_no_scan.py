"""There is no Scan: not in the source, and not on either backend's surface.

The source check looks for the ways a scan is issued (a ``scan`` method call,
the ``Scan`` operation name passed to a call, a scan paginator, a parallel-scan
segment, a ``Select=COUNT``, PartiQL) rather than the word: "scan" is also a
domain noun here (a product scan), and the DynamoDB backend names ``"Scan"`` in
its own refusal list.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType
from typing import Any

import pytest

from storage import Storage
from tests._support.source import PACKAGES, ROOT, source_files

BACKEND_PACKAGES = ("storage.sqlite", "storage.dynamodb")

SCAN_CALLS = re.compile(
    "|".join(
        [
            r"\.scan\s*\(",
            r"\bscan\s*\(\s*(?:TableName|IndexName|\*\*)",
            r"\w\s*\(\s*[\"'](?:Scan|ExecuteStatement|BatchExecuteStatement|ExecuteTransaction)[\"']",
            r"get_paginator\s*\(\s*[\"']scan[\"']",
            r"getattr\s*\([^)]*[\"']scan[\"']",
            r"\bTotalSegments\b",
            r"\bScanFilter\b",
            r"\bSelect\s*=\s*[\"']COUNT[\"']",
            r"[\"']Select[\"']\s*:\s*[\"']COUNT[\"']",
            r"\b(?:batch_)?execute_statement\s*\(",
        ]
    )
)
SCAN_NAME = re.compile("scan", re.IGNORECASE)


def scan_calls(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if SCAN_CALLS.search(line)]


@pytest.mark.parametrize(
    "line",
    [
        "await client.scan(TableName=table)",
        "response = await self.client.scan (**request)",
        "await client._make_api_call('Scan', params)",
        'paginator = client.get_paginator("scan")',
        'method = getattr(client, "scan")',
        'request["TotalSegments"] = 4',
        'await client.query(TableName=t, Select="COUNT")',
        'request = {"Select": "COUNT"}',
        "await client.execute_statement(Statement=sql)",
        "rows = scan(TableName=name)",
    ],
)
def test_the_check_finds_scan_calls(line: str) -> None:
    assert scan_calls(line) == [line]


@pytest.mark.parametrize(
    "line",
    [
        'FORBIDDEN_OPERATIONS = ("Scan", "ExecuteStatement")',
        '"ScanIndexForward": request.forward,',
        "result = ScanResult.AUTHENTIC",
        "def burst_scan(context: ScanContext) -> Alert | None:",
        'PRODUCT_SCANS = _ap("AP10", "scans of a product", ..., "Scan")',
        "await record_scan(product, scan)",
        'select = "SELECT item FROM items WHERE pk = ? AND sk = ?"',
    ],
)
def test_the_check_ignores_the_domain_noun(line: str) -> None:
    assert scan_calls(line) == []


def test_no_module_issues_a_scan() -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in source_files()
        if (found := scan_calls(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def _backend_modules() -> list[ModuleType]:
    modules = []
    for name in BACKEND_PACKAGES:
        package = importlib.import_module(name)
        modules.append(package)
        modules.extend(
            importlib.import_module(info.name)
            for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}.")
        )
    return modules


def test_backend_modules_define_nothing_named_scan() -> None:
    names = {
        f"{module.__name__}.{name}"
        for module in _backend_modules()
        for name, value in vars(module).items()
        if SCAN_NAME.search(name)
        or (
            isinstance(value, type) and value.__module__ == module.__name__ and _scan_members(value)
        )
    }
    assert names == set()


def _scan_members(cls: type) -> list[str]:
    return [name for name in dir(cls) if SCAN_NAME.search(name)]


def _own_objects(root: object, depth: int = 3) -> list[object]:
    """The object and the proofgate-owned objects reachable through its attributes."""
    seen: dict[int, object] = {}
    frontier = [root]
    for _ in range(depth):
        next_frontier = []
        for obj in frontier:
            if id(obj) in seen:
                continue
            seen[id(obj)] = obj
            for name in dir(obj):
                if name.startswith("__"):
                    continue
                value: Any = getattr(obj, name, None)
                if type(value).__module__.partition(".")[0] in PACKAGES:
                    next_frontier.append(value)
        frontier = next_frontier
    return list(seen.values())


def test_the_storage_exposes_nothing_named_scan(storage: Storage) -> None:
    objects = _own_objects(storage)
    assert len(objects) > 1, "the walk did not reach the backend behind the store"
    exposed = {
        f"{type(obj).__name__}.{name}"
        for obj in objects
        for name in dir(obj)
        if SCAN_NAME.search(name)
    }
    assert exposed == set()
