"""What a client sends cannot forge or swell a text log line (issue 27, row 5)."""

from __future__ import annotations

import logging

import pytest
from _limits import serve

from api.observability.logs import TEXT_MAX_CHARS, TextFormatter
from api.settings.operations import OperationSettings, TrustedDocuments

FORGED = "Innocent\n2026-01-01 INFO proofgate.request: request principal=ADMIN status=200"


async def test_row5_operation_names_cannot_forge_or_swell_a_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """In ``log`` mode a document outside the registry logs its operation
    name; the positive control is that it does, under its name."""
    operations = OperationSettings(trusted_documents=TrustedDocuments.LOG)
    huge = "N" * 500_000
    async with serve(operations=operations) as gateway:
        with caplog.at_level(logging.INFO):
            for name in (FORGED, huge):
                await gateway.http.post(
                    "/graphql",
                    json={"query": "query Q { health { status } }", "operationName": name},
                )
    formatter = TextFormatter()
    lines = [formatter.format(record) for record in caplog.records]
    accepted = [line for line in lines if "outside the operation registry" in line]
    assert len(accepted) == 2 and "Innocent" in accepted[0]
    assert "accepted" in accepted[0] and " ran " not in accepted[0]
    for line in lines:
        assert "\n" not in line and len(line) < TEXT_MAX_CHARS + 2_000, line[:200]
    assert "Innocent\\n2026" in accepted[0]


def test_row5_fields_and_messages_stay_on_one_bounded_line() -> None:
    record = logging.LogRecord("proofgate.request", logging.INFO, "", 0, "a\rb %s", ("c\nd",), None)
    record.fields = {"operationName": "x\n" + "y" * 10_000, "path": "/\u2028"}
    line = TextFormatter().format(record)
    assert line.endswith("a\\x0db c\\x0ad operationName=x\\x0a" + "y" * 254 + "... path=/\\x2028")
